"""Which Triton kernels a call launched, seen from the harness: installed in the candidate's child before
the candidate is imported, so a candidate that does the work in torch (or replays a cached answer) shows
up as a call that launched nothing.

On the GPU through Triton's launch hook (triton.knobs.runtime.launch_enter_hook, Triton 3.x); in the
interpreter (TRITON_INTERPRET=1) by wrapping InterpretedFunction.run, the path every interpreted launch takes."""

from __future__ import annotations


class LaunchLog:
    """Kernel names launched since the last `take()`."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def take(self) -> list[str]:
        names, self.names = self.names, []
        return names

    def install(self, device: str) -> LaunchLog:
        if device == "cuda":
            from triton import knobs

            knobs.runtime.launch_enter_hook.add(self._on_gpu_launch)
        else:
            from triton.runtime.interpreter import InterpretedFunction

            run = InterpretedFunction.run
            log = self

            def counted_run(fn, *args, grid, warmup, **kwargs):
                result = run(fn, *args, grid=grid, warmup=warmup, **kwargs)
                if not warmup:  # counted once it ran: a launch that raised did no work
                    log.names.append(fn.fn.__name__)
                return result

            InterpretedFunction.run = counted_run
        return self

    def _on_gpu_launch(self, metadata) -> None:
        self.names.append(str(metadata.data.get("name", "?")) if metadata is not None else "?")
