"""Tools for users' own tests of shax programs: a derivative checker against finite
differences (`numeric`) and hypothesis strategies for well-typed random programs
(`strategies`, which needs hypothesis: `pip install 'shax[testing]'`)."""
