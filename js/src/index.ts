// The anywidget entry point of ChatWidget (docs/protocol.md).

import type { RenderProps } from "@anywidget/types";
import type { WidgetTraits } from "./types";
import { mount } from "./view";

export default {
  render({ model, el }: Pick<RenderProps<WidgetTraits>, "model" | "el">): () => void {
    return mount(model, el);
  },
};
