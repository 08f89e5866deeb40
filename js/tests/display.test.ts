import { describe, expect, it, vi } from "vitest";
import { displayChoices, imageSource, WIDGET_VIEW } from "../src/display";
import { disposeDisplays } from "../src/render/display";
import type { DisplayBundle, Outcome } from "../src/types";
import { $, FakeModel, assertInert, assistant, call, mount, settle } from "./helpers";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const TABLE =
  '<div><style scoped>.dataframe tbody tr th { vertical-align: top; }</style><table border="1" class="dataframe">' +
  "<thead><tr><th></th><th>city</th><th>people</th></tr></thead>" +
  "<tbody><tr><th>0</th><td>Lisbon</td><td>545000</td></tr><tr><th>1</th><td>Porto</td><td>232000</td></tr></tbody>" +
  "</table></div>";
const HOSTILE = [
  "<img src=x onerror=alert(1)>",
  "<script>alert(1)</script>",
  '<a href="javascript:alert(1)">x</a>',
  '<a href=" JaVaScRiPt:alert(1)">y</a>',
  '<svg onload=alert(1)><circle r="1"/></svg>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<details open ontoggle=alert(1)>d</details>',
  '<img src="https://evil.example/track.png">',
  '<form action="javascript:alert(1)"><button>b</button></form>',
  '<div style="position:fixed;inset:0" onclick="alert(1)">cover</div>',
].join("");

/** Nothing under `root` can run script or load from elsewhere (an image only ever a data URI). */
function assertInertHere(root: Element): void {
  assertInert(root);
  for (const img of root.querySelectorAll("img[src]")) expect(img.getAttribute("src")).toMatch(/^data:image\//);
}

function success(display: DisplayBundle, extra: Partial<Outcome> = {}): Outcome {
  return { status: "success", value: null, text: null, display, ...extra };
}

async function card(outcome: Outcome, traits: Record<string, unknown> = {}, model?: FakeModel): Promise<HTMLElement> {
  const m = model ?? new FakeModel({ collapse_tool_calls: false, ...traits });
  const { view, root } = await mount(m);
  m.patch(["start", assistant("a1", 0, [call("c1", "show", { state: "completed", outcome })])]);
  view.flush();
  return $<HTMLElement>(root, '.aiw-tool-card[data-call-id="c1"]');
}

describe("display choices (pure)", () => {
  it("orders a bundle as a notebook prefers it, text/plain last", () => {
    const bundle: DisplayBundle = {
      data: {
        "text/plain": "Figure()",
        "image/png": PNG,
        "text/html": "<b>x</b>",
        "text/markdown": "**x**",
        [WIDGET_VIEW]: { model_id: "m1", version_major: 2 },
      },
    };
    expect(displayChoices(bundle, { widgets: true }).map((c) => c.kind)).toEqual([
      "widget",
      "html",
      "markdown",
      "image",
      "text",
    ]);
    expect(displayChoices(bundle, { widgets: false })[0].kind).toBe("html");
  });

  it("makes images data URIs only, SVG as base64 in an image, never markup", () => {
    expect(imageSource("image/png", PNG)).toBe(`data:image/png;base64,${PNG}`);
    expect(imageSource("image/png", "not base64!")).toBeNull();
    expect(imageSource("image/bmp", PNG)).toBeNull();
    expect(imageSource("image/png", 7)).toBeNull();
    const svg = imageSource("image/svg+xml", '<svg onload="alert(1)">é</svg>');
    expect(svg).toMatch(/^data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+$/);
    expect(new TextDecoder().decode(Uint8Array.from(atob(svg!.split(",")[1]), (c) => c.charCodeAt(0)))).toBe(
      '<svg onload="alert(1)">é</svg>',
    );
  });

  it("takes odd bundles without throwing", () => {
    expect(displayChoices(null, { widgets: true })).toEqual([]);
    expect(displayChoices({ data: null, text: "t" }, { widgets: true })).toEqual([{ kind: "text", text: "t" }]);
    expect(displayChoices({ data: { "text/plain": ["a", "b"], "text/html": 3 } }, { widgets: true })).toEqual([
      { kind: "text", text: "ab" },
    ]);
    expect(displayChoices({ data: { [WIDGET_VIEW]: "nope" } }, { widgets: true })).toEqual([]);
  });
});

describe("a result's display in the card", () => {
  it("shows a figure as an image", async () => {
    const el = await card(success({ data: { "image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>" } }));
    const img = $<HTMLImageElement>(el, ".aiw-display img");
    expect(img.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
    expect(el.querySelector(".aiw-display-text")).toBeNull();
  });

  it("shows a frame's table, sanitised (its style sheet removed), beside a value", async () => {
    const el = await card(success({ data: { "text/html": TABLE, "text/plain": "   city" } }, { value: { rows: 2 } }));
    const cells = [...el.querySelectorAll(".aiw-display-html td")].map((td) => td.textContent);
    expect(cells).toEqual(["Lisbon", "545000", "Porto", "232000"]);
    expect(el.querySelector(".aiw-display style")).toBeNull();
    expect(el.querySelector(".aiw-json, .aiw-tool-result")).not.toBeNull();
    assertInertHere($(el, ".aiw-display"));
  });

  it("runs nothing from hostile HTML, and a script-only page falls through to the image", async () => {
    const alert = vi.fn();
    (window as unknown as { alert: unknown }).alert = alert;
    const hostile = await card(success({ data: { "text/html": HOSTILE, "text/plain": "evil" } }));
    await settle();
    assertInertHere(hostile);
    expect($(hostile, ".aiw-display").dataset.kind).toBe("html");
    expect($(hostile, ".aiw-display").textContent).toContain("cover");
    const chart = await card(
      success({
        data: {
          "application/vnd.plotly.v1+json": { data: [] },
          "text/html": '<div id="p"></div><script>Plotly.newPlot("p")</script>',
          "image/png": PNG,
          "text/plain": "Figure()",
        },
      }),
    );
    expect($(chart, ".aiw-display").dataset.kind).toBe("image");
    const svg = await card(success({ data: { "image/svg+xml": '<svg onload="alert(1)"><script>alert(2)</script></svg>' } }));
    expect($(svg, ".aiw-display img").getAttribute("src")).toMatch(/^data:image\/svg\+xml;base64,/);
    assertInertHere(svg);
    const md = await card(success({ data: { "text/markdown": "**bold** [x](javascript:alert(1))", "text/plain": "m" } }));
    expect($(md, ".aiw-display strong").textContent).toBe("bold");
    assertInertHere(md);
    await settle();
    expect(alert).not.toHaveBeenCalled();
  });

  it("shows a failure's message, not a display it should not have", async () => {
    const el = await card({ status: "failure", message: "broke", display: { data: { "image/png": PNG } } });
    expect(el.querySelector(".aiw-display")).toBeNull();
  });

  it("shows an ipywidget live through the host's widget manager, and its text without one", async () => {
    const bundle: DisplayBundle = {
      data: { "text/plain": "IntSlider(value=3)", [WIDGET_VIEW]: { model_id: "slider-1", version_major: 2 } },
      text: "IntSlider(value=3)",
    };
    const without = await card(success(bundle));
    expect($(without, ".aiw-display").dataset.kind).toBe("text");
    expect($(without, ".aiw-display").textContent).toBe("IntSlider(value=3)");

    const removed = vi.fn();
    const attached: HTMLElement[] = [];
    class FakeLumino {
      node = document.createElement("div");
      static attach(widget: FakeLumino, host: HTMLElement): void {
        host.append(widget.node);
        attached.push(host);
      }
      dispose(): void {
        removed();
        this.node.remove();
      }
    }
    const lumino = new FakeLumino();
    lumino.node.className = "fake-slider";
    const manager = {
      get_model: vi.fn(async (id: string) => ({ id })),
      create_view: vi.fn(async () => ({ el: lumino.node, luminoWidget: lumino })),
    };
    const model = new FakeModel({ collapse_tool_calls: false });
    (model as unknown as { widget_manager: unknown }).widget_manager = manager;
    const live = await card(success(bundle), {}, model);
    await settle();
    expect(manager.get_model).toHaveBeenCalledWith("slider-1");
    const box = $(live, ".aiw-display-widget");
    expect(box.dataset.live).toBe("true");
    expect(box.querySelector(".fake-slider")).not.toBeNull();
    expect(box.querySelector(".aiw-display-text")).toBeNull();
    expect(attached).toEqual([box]);
    disposeDisplays(live); // the card re-renders its result, or goes: the view goes with it, once
    disposeDisplays(live);
    expect(removed).toHaveBeenCalledTimes(1);
    expect(box.querySelector(".fake-slider")).toBeNull();

    // A kernel that no longer has the model (a reopened notebook): the text stays.
    const gone = new FakeModel({ collapse_tool_calls: false });
    (gone as unknown as { widget_manager: unknown }).widget_manager = {
      get_model: () => Promise.reject(new Error("no such model")),
      create_view: vi.fn(),
    };
    const stale = await card(success(bundle), {}, gone);
    await settle();
    expect($(stale, ".aiw-display-widget").dataset.live).toBe("false");
    expect($(stale, ".aiw-display-widget").textContent).toBe("IntSlider(value=3)");
  });
});

describe("a collapsed card's display", () => {
  it("shows the figure without opening the card, once, and keeps it when the card opens", async () => {
    const el = await card(success({ data: { "image/png": PNG, "text/plain": "<Figure>" } }), { collapse_tool_calls: true });
    expect(el.classList.contains("aiw-collapsed")).toBe(true);
    const slot = $(el, ".aiw-tool-display-slot");
    expect(slot.hidden).toBe(false);
    expect($<HTMLImageElement>(slot, "img").src).toBe(`data:image/png;base64,${PNG}`);
    $<HTMLButtonElement>(el, ".aiw-tool-toggle").click();
    expect(el.classList.contains("aiw-collapsed")).toBe(false);
    expect(el.querySelectorAll(".aiw-display img")).toHaveLength(1); // not again in the opened body
  });

  it("is hidden for a result without a display and for a failure", async () => {
    const plain = await card({ status: "success", value: "ok", text: null }, { collapse_tool_calls: true });
    expect($(plain, ".aiw-tool-display-slot").hidden).toBe(true);
    const failed = await card(
      { status: "failure", message: "no", display: { data: { "image/png": PNG } } } as Outcome,
      { collapse_tool_calls: true },
    );
    expect($(failed, ".aiw-tool-display-slot").hidden).toBe(true);
  });
});
