"""The short-time Fourier transform and its inverse (``torch.stft``/``torch.istft``): frames
by unfold, transforms by ember.fft, overlap-add by nn.functional.fold; differentiable."""
import warnings

__all__ = ["istft", "stft"]

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known "
              "to cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress "
              "this warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")


def _ember():
    import ember
    return ember


def _window(E, window, n_fft, win_length, like, op):
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(f"{op}: expected 0 < win_length <= n_fft, but got win_length="
                           f"{win_length}")
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=3)
        window = E.ones(win_length, dtype=like.dtype.to_real() if like.is_complex()
                        else like.dtype, device=like.device)
    if window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{op}: expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or win_length != n_fft:
        window = E.nn.functional.pad(window, (left, n_fft - win_length - left))
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The STFT of ``input`` (L,) or (B, L): frames of ``n_fft`` samples every
    ``hop_length``, each times ``window``, Fourier transformed; (n_freq, n_frames) per
    signal, complex (``return_complex=True``) or as real pairs (False, deprecated)."""
    E = _ember()
    op = "stft"
    if return_complex is None:
        if not (input.is_complex() or (window is not None and window.is_complex())):
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=2)
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    if center:
        pad = n_fft // 2
        x = E.nn.functional.pad(x.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    w = _window(E, window, n_fft, win_length, x, op)
    frames = x.unfold(-1, n_fft, hop_length) * w                # (B, n_frames, n_fft)
    if onesided is None:
        onesided = not (x.is_complex() or w.is_complex())
    spectrum = E.fft.rfft(frames, dim=-1) if onesided else E.fft.fft(frames, dim=-1)
    if normalized:
        spectrum = spectrum * (n_fft ** -0.5)
    out = spectrum.transpose(-1, -2)                            # (B, n_freq, n_frames)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if return_complex else E.view_as_real(out)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of stft: each frame transformed back, windowed and overlap-added,
    divided by the summed squared window (which must not vanish: NOLA)."""
    E = _ember()
    op = "istft"
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"dtype, but got {input.dim()}")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    spec = input.unsqueeze(0) if input.dim() == 2 else input     # (B, n_freq, n_frames)
    if onesided is None:
        onesided = spec.shape[-2] != n_fft
    if onesided and spec.shape[-2] != n_fft // 2 + 1:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{spec.shape[-2]}")
    real_dtype = spec.dtype.to_real()
    if window is None:          # istft's default: a rectangular window, without a warning
        window = E.ones(win_length, dtype=real_dtype, device=spec.device)
    w = _window(E, window, n_fft, win_length, window, op)
    frames = spec.transpose(-1, -2)                              # (B, n_frames, n_freq)
    if normalized:
        frames = frames * (n_fft ** 0.5)
    if onesided:
        if return_complex:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        chunks = E.fft.irfft(frames, n=n_fft, dim=-1)
    else:
        chunks = E.fft.ifft(frames, dim=-1)
        if not return_complex:
            chunks = chunks.real
    chunks = chunks * w                                          # (B, n_frames, n_fft)
    n_frames = chunks.shape[-2]
    expected = n_fft + hop_length * (n_frames - 1)
    fold = E.nn.functional.fold

    def overlap_add(cols):
        return fold(cols.transpose(-1, -2), (1, expected), (1, n_fft),
                    stride=(1, hop_length)).reshape(cols.shape[0], expected)
    if chunks.is_complex():
        signal = E.complex(overlap_add(chunks.real), overlap_add(chunks.imag))
    else:
        signal = overlap_add(chunks)
    envelope = overlap_add((w * w).expand(1, n_frames, n_fft))[0]
    start = n_fft // 2 if center else 0
    end = expected - (n_fft // 2 if center else 0)
    if length is not None:
        end = start + length
    signal = signal[:, start:min(end, expected)]
    envelope = envelope[start:min(end, expected)]
    if envelope.numel() and float(envelope.abs().min()) < 1e-11:
        raise RuntimeError("istft(...): window overlap add min: "
                           f"{float(envelope.abs().min())}")
    signal = signal / envelope
    if length is not None and signal.shape[-1] < length:
        signal = E.nn.functional.pad(signal, (0, length - signal.shape[-1]))
    return signal.squeeze(0) if input.dim() == 2 else signal
