"""Every built-in primitive of the IR, by family. Importing this declares them all and
registers their rules. `shax.core.primitive` says what a primitive is; `shax.extend` how to
declare one of your own. The operations that hold definitions (call, cond, the loops,
the custom derivatives) are in `shax.control`, a later layer: their rules run stages."""

from shax.core.primitive import Arg, Linearity, Primitive, all_primitives
from shax.primitives import (  # families
    bitwise,
    checkpoint_name,
    concatenate,
    constant,
    conv,
    convert,
    debug,
    dot,
    dynamic_slice,
    elementwise_more,
    gather,
    linalg,
    pointwise,
    reduce,
    rev,
    shape,
    sort,
    stop_gradient,
    windows,
)
from shax.primitives.bitwise import *  # noqa: F403
from shax.primitives.checkpoint_name import *  # noqa: F403
from shax.primitives.concatenate import *  # noqa: F403
from shax.primitives.constant import *  # noqa: F403 - each family module lists its primitives in __all__
from shax.primitives.conv import *  # noqa: F403
from shax.primitives.convert import *  # noqa: F403
from shax.primitives.debug import *  # noqa: F403
from shax.primitives.dot import *  # noqa: F403
from shax.primitives.dynamic_slice import *  # noqa: F403
from shax.primitives.elementwise import Pointwise, elementwise
from shax.primitives.elementwise_more import *  # noqa: F403
from shax.primitives.gather import *  # noqa: F403
from shax.primitives.linalg import *  # noqa: F403
from shax.primitives.pointwise import *  # noqa: F403
from shax.primitives.reduce import *  # noqa: F403
from shax.primitives.rev import *  # noqa: F403
from shax.primitives.shape import *  # noqa: F403
from shax.primitives.sort import *  # noqa: F403
from shax.primitives.stop_gradient import *  # noqa: F403
from shax.primitives.windows import *  # noqa: F403

__all__ = ["Arg", "Linearity", "Pointwise", "Primitive", "all_primitives", "elementwise"]
__all__ += concatenate.__all__ + constant.__all__ + dot.__all__ + elementwise_more.__all__ + pointwise.__all__
__all__ += convert.__all__ + gather.__all__ + reduce.__all__ + rev.__all__ + shape.__all__ + sort.__all__
__all__ += stop_gradient.__all__ + debug.__all__ + checkpoint_name.__all__
__all__ += linalg.__all__
__all__ += bitwise.__all__
__all__ += conv.__all__ + dynamic_slice.__all__ + windows.__all__
