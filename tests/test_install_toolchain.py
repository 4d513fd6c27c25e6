"""The install step that keeps Inductor's C++ compile importable on old releases
(tools/install_build.py `_inductor_toolchain`): torch 2.1.0's `torch.utils.cpp_extension`
imports `pkg_resources.packaging`, which the environment's setuptools 84 does not have, so
every Inductor compile of that release failed (measured in the long history's first shard).

The probe runs for real, in a subprocess, against a stand-in `torch` and `pkg_resources` on
PYTHONPATH; pip is replaced by a function that writes the stand-in `pkg_resources` the asked
setuptools would bring."""

from __future__ import annotations

import pytest

from tools import install_build

PIN = install_build.SETUPTOOLS_WITH_PKG_RESOURCES.split("==")[1]


@pytest.fixture
def env(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "torch" / "utils").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("")
    (site / "torch" / "utils" / "__init__.py").write_text("")
    (site / "pkg_resources").mkdir()
    monkeypatch.setenv("PYTHONPATH", str(site))
    state = {"setuptools": "84.2.1", "pip": []}

    def setuptools(version: str) -> None:
        state["setuptools"] = version
        has = "packaging = object()\n" if version == PIN else ""  # 70 dropped it
        (site / "pkg_resources" / "__init__.py").write_text(has)

    def pip(command: str, args: list[str]) -> str:
        state["pip"].append(args)
        setuptools(PIN if args == [install_build.SETUPTOOLS_WITH_PKG_RESOURCES] else "84.2.1")
        return ""

    def release(imports_pkg_resources: bool) -> None:
        line = "from pkg_resources import packaging\n" if imports_pkg_resources else ""
        (site / "torch" / "utils" / "cpp_extension.py").write_text(line)

    setuptools("84.2.1")
    monkeypatch.setattr(install_build, "_pip", pip)
    monkeypatch.setattr(install_build, "_distribution_version", lambda name: state[name])
    state["setuptools_to"], state["release"] = setuptools, release
    return state


def test_a_release_that_needs_pkg_resources_gets_the_setuptools_that_has_it(env):
    env["release"](True)
    found, error = install_build._inductor_toolchain()
    assert error is None
    assert found["version"] == PIN
    assert "pkg_resources" in found["pinned_because"] and "84.2.1" in found["pinned_because"]
    assert env["pip"] == [[install_build.SETUPTOOLS_WITH_PKG_RESOURCES]]


def test_a_later_release_does_not_inherit_an_earlier_builds_pin(env):
    env["setuptools_to"](PIN)  # what 2.1.0's install left
    env["release"](False)
    found, error = install_build._inductor_toolchain()
    assert (found, error) == ({"version": "84.2.1"}, None)
    assert env["pip"] == [["setuptools>=70"]]


def test_two_old_releases_in_a_row_both_say_why_they_are_pinned(env):
    env["setuptools_to"](PIN)
    env["release"](True)
    found, error = install_build._inductor_toolchain()
    assert error is None and found["version"] == PIN and "pinned_because" in found


def test_a_probe_that_fails_for_another_reason_fails_the_install_naming_it(env, tmp_path):
    (tmp_path / "site" / "torch" / "utils" / "cpp_extension.py").write_text(
        "raise ImportError('libgomp.so.1: cannot open shared object file')\n"
    )
    found, error = install_build._inductor_toolchain()
    assert found == {"version": "84.2.1"}
    assert "Inductor cannot compile C++" in error and "libgomp.so.1" in error
    assert env["pip"] == []


def test_files_an_earlier_build_wrote_into_torch_are_removed_and_the_wheels_kept(tmp_path):
    """What pip's uninstall leaves in torch/ (torch 2.4's precompiled extension.h.gch, which
    made gcc crash compiling for 2.1.0 after it) is removed once the next build is installed;
    every file the wheel lists, and byte-compiled files, stay."""
    site = tmp_path / "site"
    files = ["torch/__init__.py", "torch/include/torch/extension.h"]
    for name in files:
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text("x")
    info = site / "torch-2.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.1.0\n")
    (info / "RECORD").write_text("".join(f"{n},,\n" for n in files) + f"{info.name}/RECORD,,\n")
    strays = ["torch/include/torch/extension.h.gch", "torch/include/torch/extension.h.sign"]
    for name in [*strays, "torch/__pycache__/__init__.cpython-311.pyc"]:
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text("left")
    removed = install_build.remove_strays("torch", [str(site)])
    assert sorted(p.relative_to(site).as_posix() for p in removed) == strays
    assert all((site / n).is_file() for n in files)
    assert (site / "torch/__pycache__/__init__.cpython-311.pyc").is_file()
    assert not any((site / n).exists() for n in strays)
    assert install_build.remove_strays("torch", [str(site)]) == []


def test_a_distribution_whose_files_another_uninstall_took_is_named(tmp_path):
    """nvidia-cudnn-cu12 and -cu13 both own nvidia/cudnn/lib/libcudnn.so.9: uninstalling the
    first (a leftover of an older build) removes the second's library, which is then listed
    for reinstalling; a complete distribution is not."""
    site = tmp_path / "site"
    shared = "nvidia/cudnn/lib/libcudnn.so.9"
    for name in ("nvidia_cudnn_cu13", "nvidia_cublas"):
        info = site / f"{name}-9.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 9.0\n")
        own = shared if name == "nvidia_cudnn_cu13" else "nvidia/cublas/lib/libcublas.so"
        (info / "RECORD").write_text(f"{own},,\n{info.name}/RECORD,,\n")
        (site / own).parent.mkdir(parents=True, exist_ok=True)
        (site / own).write_text("lib")
    assert install_build.clobbered([str(site)]) == []
    (site / shared).unlink()  # what `pip uninstall nvidia-cudnn-cu12` does to the shared path
    assert install_build.clobbered([str(site)]) == ["nvidia_cudnn_cu13==9.0"]


def test_what_removing_leftovers_did_is_returned_for_the_install_record(tmp_path, monkeypatch):
    """The uninstalled leftovers, the distributions reinstalled because that uninstall took
    their files, and what pip failed to do are returned (the install record keeps them as
    `leftovers`: asv shows an install's output only when it fails): a failed step is never
    listed as done."""
    calls, fails = [], set()

    def pip(command, args):
        calls.append(command)
        return "planted pip failure" if command in fails else ""

    monkeypatch.setattr(install_build, "_pip", pip)
    monkeypatch.setattr(install_build, "other_builds_caches", lambda root, keep: [])
    monkeypatch.setattr(install_build, "unneeded", lambda site: ["nvidia-cudnn-cu12"])
    monkeypatch.setattr(install_build, "clobbered", lambda site: ["nvidia_cudnn_cu13==9.0"])
    identity = {"torch_version": "2.11.0+cu130", "torch_git_version": "0" * 40}
    found = install_build.remove_what_earlier_builds_left("vm-test", identity)
    assert found == {"uninstalled": ["nvidia-cudnn-cu12"],
                     "reinstalled": ["nvidia_cudnn_cu13==9.0"], "failed": []}  # fmt: skip
    assert calls == ["uninstall", "install"]
    fails.add("install")
    found = install_build.remove_what_earlier_builds_left("vm-test", identity)
    assert found["reinstalled"] == [] and found["failed"] == [
        "reinstall nvidia_cudnn_cu13==9.0: planted pip failure"
    ]
    monkeypatch.setattr(install_build, "unneeded", lambda site: [])
    found = install_build.remove_what_earlier_builds_left("vm-test", identity)
    assert found == {"uninstalled": [], "reinstalled": [], "failed": []}


def test_a_reinstall_adds_what_it_removed_to_the_earlier_installs_leftovers():
    """The install record's `leftovers` keeps what the real install removed across no-op
    reinstalls of the same torch, and a reinstall that removes something more adds to it
    instead of replacing it (the review of stop 26 found the earlier list dropped)."""
    earlier = {"uninstalled": ["nvidia-cudnn-cu12"], "reinstalled": ["nvidia_cudnn_cu13==9.0"]}
    nothing = {"uninstalled": [], "reinstalled": [], "failed": []}
    assert install_build.merged_leftovers(earlier, nothing) == earlier
    more = {"uninstalled": ["nvidia-cudnn-cu12", "triton"], "reinstalled": [], "failed": ["x"]}
    assert install_build.merged_leftovers(earlier, more) == {
        "uninstalled": ["nvidia-cudnn-cu12", "triton"],
        "reinstalled": ["nvidia_cudnn_cu13==9.0"],
        "failed": ["x"],
    }
    assert install_build.merged_leftovers({}, nothing) == {}
