"""The CLI's commands, one module each with register(app); options.py declares every option once and turns a
command function into a typer command, planning.py assembles the planner's inputs from flags and probes."""
