"""nn.Module paths in torch-xla's `op_name` (checked with torch 2.9.0 /
torch-xla 2.9.0).

With XLA_HLO_DEBUG=1 torch-xla writes `op_name="aten__addmm"`: the aten op,
no module. `torch_xla._XLAC._set_xla_custom_op_name_prefix(t, prefix, depth)`
puts `prefix` before the op in the `op_name` of the IR node that made `t`
(every HLO instruction lowered from that node carries it). This context
names each aten op the model runs by the module that ran it:

    with ModulePaths(model):
        loss = loss_fn(model(x))
        loss.backward()

- forward: `TransformerEncoder/layers.0/self_attn/aten__addmm` (the root
  module's class, then each called submodule by its attribute name in the
  module that called it);
- backward: `backward/TransformerEncoder/layers.0/self_attn/aten__mm`, the
  module whose forward made the autograd node that runs the op;
- ops outside the model (the loss) keep the bare aten op.

Forward hooks keep the stack of running modules; a dispatch mode (below
autograd, so it sees every aten op, backward included) names each op's
outputs. For backward, each module's post-hook claims the autograd nodes
between its outputs and its inputs, innermost module first, and the mode
asks autograd which node is running. source_file/source_line stay the
user's innermost line (backward runs on the caller's thread for it).
"""
import os
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# Frames of these files are not the user's.
_LIBRARIES = (os.path.dirname(torch.__file__) + os.sep, os.path.abspath(__file__))


class ModulePaths(TorchDispatchMode):
    def __init__(self, root=None):
        """root: the model (None: whichever module is called outside any)."""
        super().__init__()
        self.root = root
        self.stack = []        # (module, path) of the running forwards
        self.bounds = []       # autograd nodes of each running forward's inputs
        self.owner = {}        # autograd node -> path of the module that made it
        self.handles = []

    def __enter__(self):
        nn = torch.nn.modules.module
        self.handles = [nn.register_module_forward_pre_hook(self._enter),
                        nn.register_module_forward_hook(self._leave)]
        # Backward on the caller's thread, so its ops have the user's frames.
        self.one_thread = torch.autograd.set_multithreading_enabled(False)
        self.one_thread.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.one_thread.__exit__(*exc)
        return super().__exit__(*exc)

    def _name(self, module):
        if not self.stack:
            return type(module).__name__
        parent = self.stack[-1][0]
        for name, m in parent.named_modules():
            if m is module:
                return name
        return type(module).__name__

    def _enter(self, module, args):
        if not self.stack and self.root not in (None, module):
            return
        path = "/".join([p for _, p in self.stack[-1:]] + [self._name(module)])
        self.stack.append((module, path))
        self.bounds.append({t.grad_fn for t in _tensors(args)})

    def _leave(self, module, args, out):
        if not self.stack or self.stack[-1][0] is not module:
            return
        _, path = self.stack.pop()
        bound = self.bounds.pop()
        todo = [t.grad_fn for t in _tensors(out)]
        while todo:
            node = todo.pop()
            if node is None or node in bound or node in self.owner:
                continue
            self.owner[node] = path
            todo.extend(n for n, _ in node.next_functions)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.stack:
            prefix = self.stack[-1][1]
        else:
            node = torch._C._current_autograd_node()
            path = self.owner.get(node) if node is not None else None
            prefix = f"backward/{path}" if path else None
        if prefix:
            import _XLAC  # torch-xla's extension, loaded by torch_xla
            # With a prefix, torch-xla keeps this many Python frames, the
            # outermost first, and source_file/line is the innermost kept:
            # down to the user's innermost frame (their model's line, or
            # their `.backward()`), as JAX's source lines are.
            frames = _user_frames(sys._getframe(1))
            for t in _tensors(out):
                if t.device.type == "xla":
                    _XLAC._set_xla_custom_op_name_prefix(t, prefix + "/", frames)
        return out


def _user_frames(frame):
    """The frames from the outermost down to the innermost one that is not
    torch's, torch-xla's or this file's; at least one (0 fails torch-xla's
    lowering with std::bad_alloc)."""
    libraries = _LIBRARIES
    xla = sys.modules.get("torch_xla")
    if xla is not None:
        libraries += (os.path.dirname(xla.__file__) + os.sep,)
    files = []
    while frame is not None:
        files.append(os.path.abspath(frame.f_code.co_filename))
        frame = frame.f_back
    for k, f in enumerate(files):  # innermost first
        if not f.startswith(libraries):
            return len(files) - k
    return max(len(files), 1)


def _tensors(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _tensors(v)]
    return []
