"""Questions asked of a graph and its plan: what is live at the live peak (`peak`, the one
definition the command line and every panel share), `explain` with its measured levers, `diff`
of two runs, and whether a plan is valid (`verify`)."""
