"""`shax.tree`: JAX's short names for `shax.tree_util` (`shax.tree.map` is `tree_map`, ...)."""

from shax.tree_util import tree_all as all
from shax.tree_util import tree_flatten as flatten
from shax.tree_util import tree_flatten_with_path as flatten_with_path
from shax.tree_util import tree_leaves as leaves
from shax.tree_util import tree_leaves_with_path as leaves_with_path
from shax.tree_util import tree_map as map
from shax.tree_util import tree_map_with_path as map_with_path
from shax.tree_util import tree_reduce as reduce
from shax.tree_util import tree_structure as structure
from shax.tree_util import tree_transpose as transpose
from shax.tree_util import tree_unflatten as unflatten

__all__ = [
    "all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map", "map_with_path", "reduce",
    "structure", "transpose", "unflatten",
]  # fmt: skip
