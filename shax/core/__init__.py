"""The leaves every other layer builds on: types and errors, what a primitive is, the
typed let-IR and its printing, the builder stages build IR with, and the walk over a
definition's bindings. Nothing here imports a later layer (docs/architecture.md)."""
