"""SummaryWriter: scalars, scalar groups, histograms and text, as PyTorch writes them."""
import os
import socket
import time
from datetime import datetime

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
from tensorboard.summary.writer.event_file_writer import EventFileWriter

__all__ = ["SummaryWriter"]


def _default_bins():
    """TensorFlow's histogram buckets: ±1e-12 growing by 10% up to 1e20, and 0."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0] + pos


def _as_numpy(x):
    import ember
    if isinstance(x, ember.Tensor):
        return x.detach().to("cpu", ember.float64).numpy()
    return np.asarray(x, dtype=np.float64)


def _scalar(x):
    import ember
    if isinstance(x, ember.Tensor):
        if x.numel() != 1:
            raise ValueError(f"Tensor with {x.numel()} elements cannot be converted to Scalar")
        return float(x.item())
    return float(x)


def _histogram(values, bins, max_bins=None):
    values = _as_numpy(values).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = -(-len(counts) // max_bins)
        counts = np.add.reduceat(counts, np.arange(0, len(counts), step))
        limits = np.append(limits[:-1:step], limits[-1])
    nz = np.nonzero(counts)[0]
    lo, hi = (nz[0], nz[-1] + 1) if len(nz) else (0, len(counts))
    return HistogramProto(min=float(values.min()), max=float(values.max()),
                          num=int(values.size), sum=float(values.sum()),
                          sum_squares=float(values.dot(values)),
                          bucket_limit=limits[lo + 1:hi + 1].tolist(),
                          bucket=counts[lo:hi].tolist())


class SummaryWriter:
    """Write TensorBoard event files into ``log_dir`` (default
    ``runs/<Mon>DD_HH-MM-SS_<host><comment>``).  A context manager: ``close()`` on exit."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = EventFileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)
        self.all_writers = {self.log_dir: self.file_writer}
        self._bins = None

    def get_logdir(self):
        return self.log_dir

    def _write(self, summary, global_step, walltime, writer=None):
        ev = Event(summary=summary, wall_time=time.time() if walltime is None else walltime)
        if global_step is not None:
            ev.step = int(global_step)
        (writer or self.file_writer).add_event(ev)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Log one number (a Python number or a one-element tensor) under ``tag``."""
        value = Summary.Value(tag=tag, simple_value=_scalar(scalar_value))
        self._write(Summary(value=[value]), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several numbers on one chart: each key gets its own run directory
        ``<log_dir>/<main_tag>_<key>``, as PyTorch does."""
        walltime = time.time() if walltime is None else walltime
        for tag, v in tag_scalar_dict.items():
            path = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + tag)
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = EventFileWriter(
                    path, self.max_queue, self.flush_secs, self.filename_suffix)
            value = Summary.Value(tag=main_tag, simple_value=_scalar(v))
            self._write(Summary(value=[value]), global_step, walltime, writer)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Log the distribution of ``values``; ``bins`` is 'tensorflow' (exponential
        buckets), a NumPy bin rule name, a count, or the edges."""
        if isinstance(bins, str) and bins == "tensorflow":
            if self._bins is None:
                self._bins = _default_bins()
            bins = self._bins
        value = Summary.Value(tag=tag, histo=_histogram(values, bins, max_bins))
        self._write(Summary(value=[value]), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log a (markdown) string, shown by TensorBoard's text plugin."""
        meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
        tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        value = Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)
        self._write(Summary(value=[value]), global_step, walltime)

    def flush(self):
        """Write pending events to disk."""
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.all_writers = {}

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
