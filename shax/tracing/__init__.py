"""From a Python function to a Definition and back: the tracer (the typeclass instance
that records operations, with numpy's methods and protocols), recovering sharing,
`trace`, `evaluate` (a definition on values or tracers), and the checks the stages share."""
