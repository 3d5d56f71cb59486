"""ember-reference: ember's reference device ("reference"), a pretend accelerator.

Its memory is a separate host arena reached only through the kernel ABI's copy entries
(device addresses are never dereferenceable by anyone but the plugin's kernels), and it
implements every entry of ember's kernel ABI in plain, serial C.  It is the template a
hardware vendor copies: see README.md and ember_reference/csrc/reference.h."""
__version__ = "0.1.0"
