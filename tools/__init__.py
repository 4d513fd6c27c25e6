"""writeback's tools, run from the project root as modules: `python -m tools.history`,
`python -m tools.report`, ... (see the README). Importing this package imports nothing: the
standalone check (`tools.check`) and the install command (`tools.install_build`)
run in a benchmark environment that holds torch and no tools-only dependency.
"""
