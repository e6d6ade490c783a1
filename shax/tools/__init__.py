"""What shows a program to a person: `explain` (the pipeline printer), its HTML page and
views, `diff`, `stats`, Graphviz pictures, plots and the `shax` command line."""
