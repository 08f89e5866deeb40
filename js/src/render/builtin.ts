// Tools a provider runs itself (OpenAI's web_search, Anthropic's web_fetch, ...) are not in the session's
// registry, so the `tools` trait knows nothing of them. Their cards get a readable title and a fitting icon from
// here instead of the raw name and a wrench. Only for provider-run calls: a local tool of the same name is the
// person's own and keeps what its definition says.

import type { ToolInfo } from "../types";

const BUILTIN: Record<string, ToolInfo> = {
  web_search: { title: "Web search", icon: "🔍" },
  web_search_preview: { title: "Web search", icon: "🔍" },
  google_search: { title: "Google Search", icon: "🔍" },
  web_fetch: { title: "Fetch web page", icon: "🌐" },
  url_context: { title: "Read web pages", icon: "🌐" },
  file_search: { title: "File search", icon: "🗂️" },
  code_interpreter: { title: "Code interpreter", icon: "🧮" },
  code_execution: { title: "Code execution", icon: "🧮" },
  bash_code_execution: { title: "Code execution (shell)", icon: "🧮" },
  text_editor_code_execution: { title: "Code execution (files)", icon: "🧮" },
  image_generation: { title: "Image generation", icon: "🎨" },
  mcp: { title: "MCP server tool", icon: "🔌" },
};

/** Title and icon of a provider's built-in tool, by its name (case-insensitive), or undefined. */
export function builtinToolInfo(name: string): ToolInfo | undefined {
  const key = name.toLowerCase();
  return Object.prototype.hasOwnProperty.call(BUILTIN, key) ? BUILTIN[key] : undefined;
}
