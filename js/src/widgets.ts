// Live ipywidgets inside a card: a tool that returns a widget gives its model id
// (application/vnd.jupyter.widget-view+json), and the host's widget manager (anywidget hands it over as
// `model.widget_manager`, JupyterLab's and Notebook 7's ipywidgets manager) makes a view of that model. A host
// without one (a static page, marimo, a kernel that no longer has the model) shows the widget's text instead.

/** What a card needs to show a widget live. */
export interface WidgetHost {
  /** Shows a view of the widget model `modelId` in `el`; resolves to what removes it, rejects when it cannot. */
  show(modelId: string, el: HTMLElement): Promise<() => void>;
}

// The parts of the ipywidgets manager and its views used here (@jupyter-widgets/base), typed loosely: they come from
// the host page, not from this bundle.
interface LuminoWidget {
  node: HTMLElement;
  dispose?: () => void;
}
interface LuminoWidgetClass {
  attach?: (widget: LuminoWidget, host: HTMLElement) => void;
}
interface WidgetView {
  el: HTMLElement;
  luminoWidget?: LuminoWidget;
  pWidget?: LuminoWidget; // ipywidgets 7
  remove?: () => void;
  trigger?: (name: string) => void;
}
interface WidgetManager {
  get_model(modelId: string): Promise<unknown> | undefined;
  create_view(model: unknown, options?: object): Promise<WidgetView>;
}

function isManager(value: unknown): value is WidgetManager {
  const m = value as Partial<WidgetManager> | null;
  return !!m && typeof m.get_model === "function" && typeof m.create_view === "function";
}

/** The host's widget manager as a WidgetHost, or null when the page has none. */
export function widgetHost(model: unknown): WidgetHost | null {
  const manager = (model as { widget_manager?: unknown } | null)?.widget_manager;
  if (!isManager(manager)) return null;
  return {
    async show(modelId, el) {
      const found = await manager.get_model(modelId);
      if (!found) throw new Error(`no widget model ${modelId}`);
      const view = await manager.create_view(found, {});
      const lumino = view.luminoWidget ?? view.pWidget;
      // Lumino's Widget.attach (a static every Lumino widget class inherits) sends the attach messages a view
      // waits for before it lays itself out; a bare element (or a host not in the page yet) is appended.
      const attach = lumino ? (lumino.constructor as LuminoWidgetClass).attach : undefined;
      if (lumino && attach && el.isConnected) {
        attach(lumino, el);
      } else {
        el.append(view.el);
        view.trigger?.("displayed");
      }
      return () => {
        if (lumino?.dispose) lumino.dispose();
        else view.remove?.();
      };
    },
  };
}
