"""How a loop of ops executes: eagerly from Python (the reference, and the CPU path), or recorded
once on the device and replayed there (:func:`iterate`).

- ``iterate.py``: the public :func:`iterate` and its arguments;
- ``capture.py``: recording a body into a CUDA graph whose WHILE node runs the iterations on the
  device (a graph replayed from the host, one test read per iteration, where conditional nodes
  are missing), with the fused block behind the recorded iteration where its kernels allow
  (gbla.kernels._fused: one block runs the small iterations in one kernel);
- ``workspace.py``: the buffers a recorded loop owns (state vectors, loop control, the scratch
  its ops keep across iterations);
- ``meter.py``: the edges a loop's products examine, counted where they run (ops add an eager
  product's; a recorded loop's products count on the device).

``ops`` takes its device-resident paths while a body is recorded; algorithms only choose to
iterate.
"""

from .iterate import LoopState, iterate

__all__ = ["iterate", "LoopState"]
