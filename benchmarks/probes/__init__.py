"""What is measured about one control: its generated code, its runtime scratch and entrypoint
calls, its warm call time. `probe.py` runs them in order for a whole scenario."""
