"""`amber.communication` (MindSpore's `mindspore.communication`): the processes of a
data-parallel job on MPI, and the parallel context that makes train steps reduce over them.
Imports no MPI unless an MPI launcher started the process."""
from .management import (get_group_size, get_local_rank, get_local_rank_size, get_rank, init,
                         release)
from .parallel import (ParallelMode, get_auto_parallel_context, reset_auto_parallel_context,
                       set_auto_parallel_context)
from .sharding import shard_rows

__all__ = ["init", "release", "get_rank", "get_group_size", "get_local_rank",
           "get_local_rank_size", "ParallelMode", "set_auto_parallel_context",
           "get_auto_parallel_context", "reset_auto_parallel_context", "shard_rows"]
