"""A remote agent served over AG-UI, by the path DESIGN.md names: :class:`AGUITransport` lives with the other
transports (``ai_widgets.transports.AGUITransport``) and is the same class here (``pip install "ai_widgets[ag-ui]"``)."""

from ai_widgets.transports._ag_ui import AGUITransport

__all__ = ["AGUITransport"]
