"""Unit tests of ai_widgets.kernel, in a plain dict namespace (the real-kernel tests are in tests/kernel)."""
