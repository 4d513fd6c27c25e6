#!/usr/bin/env bash
# First-run checks, each with what to do. Usage: tools/preflight.sh [test|history]
# Exits 1 on the first problem that would make the command fail later, with less clarity.
set -u
what=${1:-test}
fail() { echo "writeback: $1" >&2; exit 1; }

py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || fail "no $py on PATH: install Python 3.11 (or run make PYTHON=/path/to/python3.11 $what)."
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
  || fail "$py is $("$py" -V 2>&1); writeback needs Python 3.10 or newer (3.11 is what it is tested with)."
"$py" -c 'import venv, ensurepip' 2>/dev/null \
  || fail "$py cannot create virtual environments: install its venv module (Debian/Ubuntu: apt-get install python3-venv)."
command -v git >/dev/null 2>&1 \
  || fail "no git on PATH: asv reads the build ledger as a git repository. Install git (Debian/Ubuntu: apt-get install git)."
cxx=${CXX:-g++}
command -v "$cxx" >/dev/null 2>&1 \
  || fail "no C++ compiler ($cxx) on PATH: TorchInductor compiles its CPU kernels with one, so no control could be compiled. Install g++ (Debian/Ubuntu: apt-get install g++) or set CXX."

if [ "$what" = history ]; then
  # A CUDA build of torch is about 5 GB installed; one asv environment holds one at a time,
  # plus pip's cache of every wheel it downloaded.
  need_gb=${WRITEBACK_MIN_FREE_GB:-12}
  free_kb=$(df -Pk . | awk 'NR==2 {print $4}')
  if [ -n "$free_kb" ] && [ "$free_kb" -lt $((need_gb * 1024 * 1024)) ]; then
    fail "only $((free_kb / 1024 / 1024)) GB free here; a history run needs about $need_gb GB (torch's CUDA builds are ~5 GB installed, plus pip's cache). Free some space, or set WRITEBACK_MIN_FREE_GB if you know your builds are smaller (CPU wheels are ~1 GB)."
  fi
fi
exit 0
