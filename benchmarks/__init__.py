"""Performance measurements of shax, side by side with what users would otherwise use
(hand-written numpy, JAX, PyTorch, HIPS autograd). They measure and never assert, and
the test run does not collect them (pytest's testpaths is tests/).

    python -m benchmarks [--quick]     B1-B5 of issue 7, B6 (loops, issue 35), B7-B8 (training steps), one table each
    python benchmarks/vjp.py           the VJP pipeline's stages at 1k-100k operations
    python benchmarks/trace.py         tracing, typing, printing, evaluating a long chain
    python benchmarks/passes.py        the rewrite passes on large programs
"""
