"""`compile_definition`: a Definition -> the source of one Python function that calls
numpy directly, compiled once.

    compiled = compile_definition(defn)
    compiled(*args)          # what shax.evaluate(defn, *args) gives: a list, one entry per output
    print(compiled.source)   # def medium(x0, x8): ... x2 = np.sin(x1) ... return [x14]

Results equal `evaluate`'s bit for bit, as numpy arrays or scalars alike. Each module
states its part of the contract:

    compiled    compile_definition, Compiled: compiling, and checking arguments as evaluate does
    generator   the source of one definition: liveness, broadcasts numpy stretches, `out=` reuse
    chunks      a long body split into functions of CHUNK statements
"""

from shax.codegen.chunks import CHUNK
from shax.codegen.compiled import Compiled, compile_definition

__all__ = ["CHUNK", "Compiled", "compile_definition"]
