"""Tests of the kernel plumbing (ai_widgets.widget._kernel) against real ipykernels."""
