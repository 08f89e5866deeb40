"""The transport to Google's Gemini models (``streamGenerateContent``, server-sent events), through the official
``google-genai`` SDK, on the Gemini Developer API or Vertex AI: its construction, the request it sends and how its
errors read (the SDK's chunks are parsed in ``_gemini_stream``)."""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from ai_widgets._safe import redact
from ai_widgets.attachments import AttachmentLimits
from ai_widgets.events import ResponseStarted, StreamEvent
from ai_widgets.messages import FilePart, Message, ReasoningPart, Role, TextPart, ToolCallPart
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS
from ai_widgets.tools._formats import gemini_function_declaration
from ai_widgets.transports._base import ChatRequest, TransportProfile
from ai_widgets.transports._client import NO_KEY, check_connection_arguments, import_sdk
from ai_widgets.transports._errors import (
    Failure,
    ProviderError,
    broke_off,
    classified,
    describe_status,
    http_failure,
    missing_key,
    timed_out,
    unreachable,
)
from ai_widgets.transports._gemini_arguments import LABEL
from ai_widgets.transports._gemini_stream import PROVIDER_ID, GeminiParser
from ai_widgets.transports._history import (
    ModelImage,
    RequestImages,
    file_note,
    history,
    outcome_text,
    own_data,
    user_parts,
)
from ai_widgets.transports._models import DEFAULT_MODELS, default_model
from ai_widgets.transports._output import gemini_generation_config, gemini_takes_schema_with_tools, json_instruction
from ai_widgets.transports._sse import StreamParser
from ai_widgets.transports._windows import known_window

import_sdk("google.genai", "gemini")  # says which extra to install when the SDK is missing

from google import genai  # noqa: E402
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types as genai_types  # noqa: E402

__all__ = ["DEFAULT_MODEL", "GeminiTransport"]

JSON = dict[str, Any]

#: The model a ``GeminiTransport()`` talks to when none is named: a current small (Flash) Gemini model, from the
#: table of every provider's default.
DEFAULT_MODEL = DEFAULT_MODELS["gemini"]

KEY_VARIABLES = "GEMINI_API_KEY or GOOGLE_API_KEY"
KEY_HINT = f"{KEY_VARIABLES}, or api_key="
VERTEX_HINT = "the Google Cloud credentials (gcloud auth application-default login), or api_key="

#: The thought signature Google documents for a function call Gemini did not sign (a conversation that began with
#: another provider, a signature lost): Gemini 3 refuses a step whose first function call has none. It goes as the
#: bytes of this text, base64-encoded, as the SDK sends it (verified against the live API by pydantic-ai).
SKIP_SIGNATURE = base64.b64encode(b"skip_thought_signature_validator").decode("ascii")

# Models that take images inside a function response (``functionResponse.parts``): Gemini 3 and later. Older ones
# get a tool's images as a user message right after the function responses.
MULTIMODAL_RESPONSES = re.compile(r"gemini-([3-9]|\d\d)")
# The image types Gemini reads (of those every provider takes: GIF is not among Gemini's).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp"})
# The deadline Google gives a whole request, in seconds, sent as ``X-Server-Timeout``: 20 minutes, what Google
# recommends for long replies. The SDK would send the client's timeout, which bounds only the wait between chunks
# here, and the server would cut off a reply that streams for longer.
SERVER_DEADLINE = 20 * 60
# One image's limit, in base64 characters (about 5 MB): the whole request must stay under Gemini's 20 MB, so the
# images of one request together take at most 14 MB of base64 (the oldest left out first), and at most 3,000 of them
# (Gemini's limit on images per prompt).
MAX_IMAGE_CHARS = 7_000_000
MAX_REQUEST_IMAGE_CHARS = 14 * 1024 * 1024
MAX_REQUEST_IMAGES = 3000
#: What a user message's files may be (ai.google.dev, image and document understanding): PNG, JPEG and WebP images
#: and PDFs, inline or by ``fileUri`` (the Files API's, or a ``gs://`` one on Vertex AI); inline data of a request at
#: most 20 MB, so 14 MB of files (base64 makes them 4/3 as long); 3,000 images a prompt.
ATTACHMENT_LIMITS = AttachmentLimits(
    LABEL,
    max_image_bytes=14 * 1024 * 1024,
    max_images=3000,
    max_document_bytes=14 * 1024 * 1024,
    max_total_bytes=14 * 1024 * 1024,
    image_types=IMAGE_TYPES,
)


def truthy_env(*names: str) -> bool | None:
    """The first of these environment variables that is set, read as the SDK reads a flag (``None``: none set)."""
    for name in names:
        value = os.environ.get(name)
        if value is not None:
            return value.strip().lower() in ("true", "1")
    return None


class GeminiTransport:
    """A Gemini model, on the Gemini Developer API or on Vertex AI (``client.aio.models.generate_content_stream``).

    Args:
        model: The model name; by default :func:`~ai_widgets.transports.default_model` (``AI_WIDGETS_MODEL``, else
            :data:`DEFAULT_MODEL`, a small, current Flash model).
        client: A ``google.genai.Client`` you configured (its key or credentials, base URL, retries and timeout are
            used).
        api_key: The key, for a client this transport makes; ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` by default
            (the SDK's order). On Vertex AI, a key selects its express mode.
        base_url: Another endpoint speaking the Gemini API (a proxy); ``GOOGLE_GEMINI_BASE_URL`` (or
            ``GOOGLE_VERTEX_BASE_URL``) by default.
        vertexai: Use Vertex AI (Google Cloud) instead of the Gemini Developer API; by default the SDK's
            ``GOOGLE_GENAI_USE_VERTEXAI`` decides. Credentials come from Application Default Credentials.
        project: The Google Cloud project (Vertex AI); ``GOOGLE_CLOUD_PROJECT`` by default.
        location: The Vertex AI location, e.g. ``"us-central1"``; ``GOOGLE_CLOUD_LOCATION`` (or ``global``) by default.
        max_retries: Retries of a request that fails with 408/429/5xx or a connection error, with the SDK's
            exponential backoff, before the first chunk of the stream; never once the reply has begun.
        timeout: Seconds to wait to connect and between chunks of the stream. Google's deadline for the whole
            request is 20 minutes (``X-Server-Timeout``), so a long reply is not cut off.
        thinking: The ``thinkingConfig`` sent in ``generationConfig``, as given, e.g.
            ``{"includeThoughts": True, "thinkingLevel": "low"}`` (``includeThoughts`` streams thought summaries,
            which show as reasoning).
        stream_function_call_arguments: Ask Vertex AI to stream function-call arguments as the model writes them
            (``streamFunctionCallArguments``); the Gemini Developer API sends each call whole.
        multimodal_function_responses: Send images of tool results inside the function response (``True``), or as
            a user message right after the function responses (``False``); by default inside for Gemini 3 and later.

    Raises:
        ValueError: ``model`` is empty, ``client`` was given together with arguments that configure one,
            ``stream_function_call_arguments`` without Vertex AI, or ``max_retries`` below 0.
        ProviderError: No key for the Gemini Developer API was given or found, or Vertex AI found no credentials.
            A ``base_url`` (or ``GOOGLE_GEMINI_BASE_URL``) without a key gets a placeholder instead: a local server
            or proxy may need none, and a remote one answers with a message about the key.

    Mapping and provider quirks:

    - Request: the system prompt as ``systemInstruction``; user text as ``user`` contents, with attachments as
      ``inlineData`` parts (``fileData`` with ``fileUri`` for a URL; a file Gemini would refuse, as
      ``attachment_limits`` says, becomes a text note saying what it was); an assistant reply as ``model`` contents with
      its parts in the order they arrived: text, thought summaries (``thought: true``) and ``functionCall`` parts
      (``args``: the parsed arguments). After each round of local calls comes a ``user`` content with one
      ``functionResponse`` per call, in order (``response``: ``{"output": ...}``, or ``{"error": ...}`` for failed,
      declined and cancelled calls; the text is what the model is told). A reply holds every round of its turn, so it is
      split into one model content per round: a round ends at the first part after a local call that is not itself a
      local call, or at a call Gemini signed (Gemini signs the first call of each response). Calls any provider made go
      as ``functionCall``; calls a provider ran itself are left out (Gemini cannot take another provider's tools).
    - Ids: Gemini may leave a call without an ``id`` (the recorded streams do). Such a call gets one made here
      (``gemini_call_<random>``, stable: it is stored with the call) and its ``functionCall`` and
      ``functionResponse`` go back without an id, as Gemini sent them, so Gemini pairs them by order and name. An id
      Gemini gave is kept in the call's provider data (``{"id": ...}``) and goes back on both. Calls of other
      providers go back without their ids.
    - Thought signatures (Gemini 3 requires them back on the parts they came on): only parts with
      ``provider == "gemini"`` send theirs back, and only to the API that issued them (the Developer API and Vertex AI
      refuse each other's: data from Vertex AI holds ``"vertexai": True``). A function call keeps its signature in
      its provider data (``{"thought_signature": ...}``, base64 as Gemini sent it). A signature on any other part
      becomes a reasoning part's provider data (the stream has no other way to store data for text): on a thought
      part, that part's; on text (or on a chunk after a call started), an empty reasoning part right after it,
      which goes back as the signature of the part before it. Thought summaries without a signature, and reasoning of
      any other provider, are left out. The first function call of each model content that has no signature of
      Gemini's gets the dummy signature Google documents for calls Gemini did not sign
      (``skip_thought_signature_validator``), so a conversation begun elsewhere can go on here.
    - Images in tool results (image attachments of a successful outcome and its display's image, as
      :func:`outcome_images` accepts them: valid base64 or an http(s) URL; PNG, JPEG and WebP, as Gemini takes no GIF):
      for Gemini 3 and later inside the function response (Google's multimodal function responses), as ``parts`` of
      ``inlineData`` (``fileData`` for a URL) with a ``displayName`` (``<tool>-<n>.<ext>``), which the ``response``
      refers to as ``{"images": [{"$ref": name}]}``; for older models (and with ``multimodal_function_responses=False``)
      as a ``user`` content right after the function responses, each image after a line naming it and its call. Other
      attachments stay on the card.
    - Tools: ``functionDeclarations`` with ``parametersJsonSchema`` (the JSON Schema as it is). Tool choice:
      ``AUTO``, ``ANY`` (required), ``ANY`` with ``allowedFunctionNames`` (a specific tool); with no tools
      (``ToolChoice.NONE``) neither ``tools`` nor ``toolConfig`` is sent.
    - A typed answer (``ChatRequest.output_schema``): ``responseMimeType: "application/json"`` and the schema as it
      is in ``responseJsonSchema``, in ``generationConfig``. Models before Gemini 3 refuse that beside function
      declarations, so a request of theirs with tools asks in ``systemInstruction`` instead (a last text part saying
      to answer with JSON matching the schema); the session validates the answer either way.
    - ``temperature``, ``maxOutputTokens`` (from ``max_tokens``) and ``thinkingConfig`` in ``generationConfig``
      (sent empty when none is set, as the SDK sends it); ``options.extra`` is merged into the JSON body last, so it
      can set or override any field.
    - The body is sent exactly as :meth:`request_body` builds it, as ``extra_body``, which the SDK merges over what
      it built (the SDK would re-encode signatures as URL-safe base64 and write some nested fields in snake case;
      both are accepted, but a signature goes back byte for byte as Gemini sent it). The history is not converted to
      the SDK's types: their rendering would be replaced by the body's anyway.
    - Stream: text as text, thought summaries as reasoning, calls with their arguments (whole on the Developer API;
      on Vertex AI with ``stream_function_call_arguments``, streamed key by key from the ``partialArgs`` JSON paths,
      written as JSON text in the order they come), several per response. Usage: ``input_tokens`` is the prompt
      (with tool-use prompt tokens), ``output_tokens`` the candidates and thoughts, ``cached_tokens`` the cached
      content (implicit caching, which Gemini 2.5 and later do on their own), ``reasoning_tokens`` the thoughts, the
      model ``modelVersion`` names priced as Google's. Finish reasons: ``STOP`` is stop (tool calls when the response
      made calls), ``MAX_TOKENS`` length, the safety family content filter; a malformed or unexpected call, too many
      calls or a missing thought signature raise :class:`ProviderError` saying so (with Gemini's ``finishMessage``
      where the SDK keeps it: from Vertex AI), as does a prompt Gemini blocked. There is no status line of the
      transport's own: the SDK opens the request when the first chunk is read, so nothing is known between the
      request and the first content (the session shows its own waiting status, and ``includeThoughts`` streams the
      thinking as reasoning).
    - Errors: HTTP failures (after the SDK's retries) and errors in the stream raise :class:`ProviderError` with
      Gemini's status and message, never a key.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        vertexai: bool | None = None,
        project: str | None = None,
        location: str | None = None,
        max_retries: int = 2,
        timeout: float = 60.0,
        thinking: Mapping[str, Any] | None = None,
        stream_function_call_arguments: bool = False,
        multimodal_function_responses: bool | None = None,
    ) -> None:
        if model is None:
            model = default_model("gemini")
        if not model:
            raise ValueError(f"a model name is needed, e.g. GeminiTransport({DEFAULT_MODEL!r})")
        check_connection_arguments(
            client, api_key=api_key, base_url=base_url, vertexai=vertexai, project=project, location=location
        )
        if max_retries < 0:
            raise ValueError(f"max_retries must be at least 0, not {max_retries!r}")
        given = client
        if client is None:
            client = make_client(api_key, base_url, vertexai, project, location, max_retries, timeout)
            self._timeout: float | None = timeout
        else:
            self._timeout = None  # the client's own
        self.model = model
        self.thinking = dict(thinking) if thinking is not None else None
        #: What the files of a user message may be; ``send(..., attach=...)`` refuses others before sending.
        self.attachment_limits = ATTACHMENT_LIMITS
        self._client = client
        self._base_url = (base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL")) if given is None else None
        self._vertexai = bool(getattr(client, "vertexai", False))
        self.price_provider: str | None = "google"  #: genai-prices' id of the provider, for the cost
        if stream_function_call_arguments and not self._vertexai:
            raise ValueError(
                "stream_function_call_arguments needs Vertex AI: the Gemini Developer API sends calls whole"
            )
        self.stream_function_call_arguments = stream_function_call_arguments
        self.multimodal_function_responses = (
            bool(MULTIMODAL_RESPONSES.search(model))
            if multimodal_function_responses is None
            else multimodal_function_responses
        )
        # Only to scrub error texts: whatever key the client resolved (argument or environment).
        resolved = getattr(getattr(client, "_api_client", None), "api_key", None)
        self._secrets = tuple(
            s
            for s in (api_key, resolved, os.environ.get("GEMINI_API_KEY"), os.environ.get("GOOGLE_API_KEY"))
            if isinstance(s, str) and s and s != NO_KEY
        )

    def __repr__(self) -> str:
        return f"GeminiTransport({self.model!r}{', vertexai=True' if self._vertexai else ''})"

    @property
    def client(self) -> Any:
        """The SDK client the requests go through (a ``google.genai.Client``)."""
        return self._client

    @property
    def profile(self) -> TransportProfile:
        """What this transport is: the provider that prices it (``price_provider``), the model, the model's context
        window in tokens from genai-prices' model table (or ours: ``_windows``; ``None`` for a server it does not
        know), and the attachment limits. Read again for each request, so it follows a changed model."""
        return TransportProfile(
            provider=self.price_provider,
            model=self.model,
            context_window=known_window("google", self.model, base_url=self._base_url),
            max_output_tokens=None,
            attachment_limits=self.attachment_limits,
        )

    @property
    def vertexai(self) -> bool:
        """Whether the requests go to Vertex AI (else to the Gemini Developer API)."""
        return self._vertexai

    # --- request mapping ----------------------------------------------------------------------------------------------

    def request_body(self, request: ChatRequest) -> JSON:
        """The JSON body of the request for ``request``, as sent (``options.extra`` merged last). The model is not in
        the body: it is part of the URL."""
        options = request.options
        body: JSON = {
            "contents": self.request_messages(request.messages, max_tool_result_chars=options.max_tool_result_chars)
        }
        if options.system_prompt:
            body["systemInstruction"] = {"parts": [{"text": options.system_prompt}]}
        if options.tool_choice.mode != "none" and request.tools:
            declarations = [gemini_function_declaration(definition) for definition in request.tools]
            body["tools"] = [{"functionDeclarations": declarations}]
            calling: JSON = {"mode": "ANY" if options.tool_choice.mode in ("required", "tool") else "AUTO"}
            if options.tool_choice.mode == "tool" and options.tool_choice.tool_name:
                calling["allowedFunctionNames"] = [options.tool_choice.tool_name]
            if self.stream_function_call_arguments:
                calling["streamFunctionCallArguments"] = True
            body["toolConfig"] = {"functionCallingConfig": calling}
        generation: JSON = {}
        if options.temperature is not None:
            generation["temperature"] = options.temperature
        if options.max_tokens is not None:
            generation["maxOutputTokens"] = options.max_tokens
        if self.thinking is not None:
            generation["thinkingConfig"] = self.thinking
        schema = request.output_schema
        if schema is not None and ("tools" not in body or gemini_takes_schema_with_tools(self.model)):
            generation.update(gemini_generation_config(schema))
        elif schema is not None:  # a Gemini before 3, with tools: the schema goes in the instructions
            instruction = body.setdefault("systemInstruction", {"parts": []})
            instruction["parts"].append({"text": json_instruction(schema)})
        # Always there, empty when nothing is set: the SDK sends it for every request with a config (see stream).
        body["generationConfig"] = generation
        body.update(options.extra)
        return body

    def request_messages(
        self, messages: Iterable[Message], *, max_tool_result_chars: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS
    ) -> list[JSON]:
        """The history as Gemini ``contents``: user and model contents, function responses right after their calls
        (each result cut to ``max_tool_result_chars``, see ``RequestOptions``)."""
        contents: list[JSON] = []
        names = DisplayNames()
        messages = list(history(messages))
        images = RequestImages(
            messages,
            max_chars=MAX_IMAGE_CHARS,
            max_total_chars=MAX_REQUEST_IMAGE_CHARS,
            max_count=MAX_REQUEST_IMAGES,
            accept=lambda image: image.media_type in IMAGE_TYPES,
        )
        for message in messages:
            if message.role is Role.USER:
                parts = [self._user_part(part) for part in user_parts(message)]
                if parts:
                    contents.append({"role": "user", "parts": parts})
            else:
                contents += self._model_turns(message, names, images, max_tool_result_chars)
        return contents

    def _user_part(self, part: TextPart | FilePart) -> JSON:
        """A user message's text or file as a part: ``text``, ``inlineData`` or ``fileData`` (a URL)."""
        if isinstance(part, TextPart):
            return {"text": part.text}
        if self.attachment_limits.kind_of(part) is None:
            return {"text": file_note(part, self.attachment_limits.provider)}
        if part.url is not None:
            return {"fileData": {"mimeType": part.media_type, "fileUri": part.url}}
        return {"inlineData": {"mimeType": part.media_type, "data": part.data}}

    def _model_turns(
        self, message: Message, names: DisplayNames, chosen: RequestImages, limit: int | None
    ) -> list[JSON]:
        """One reply as contents: each round of local calls as a model content, then a user content with their
        function responses (and, where they go outside, a user content with their images)."""
        turns: list[JSON] = []
        parts: list[JSON] = []
        responses: list[JSON] = []
        images: list[JSON] = []

        def flush() -> None:
            nonlocal parts, responses, images
            if parts:
                turns.append({"role": "model", "parts": sign_first_call(parts)})
            if responses:
                turns.append({"role": "user", "parts": responses})
            if images:
                turns.append({"role": "user", "parts": images})
            parts, responses, images = [], [], []

        for part in message.parts:
            local_call = isinstance(part, ToolCallPart) and not part.provider_executed
            # A signature-only reasoning part belongs to the part before it (see the class docstring).
            signature_only = (
                isinstance(part, ReasoningPart) and not part.text and bool(parts) and self._signature(part) is not None
            )
            # Gemini signs the first call of each response: a signed call after answered ones began the next response.
            next_step = local_call and self._signature(part) is not None
            if responses and (next_step or not (local_call or signature_only)):
                flush()  # the model saw these results: what follows is its next response
            match part:
                case TextPart():
                    if part.text:
                        parts.append({"text": part.text})
                case ReasoningPart():
                    self._reasoning(part, parts)
                case ToolCallPart() if part.provider_executed:
                    continue  # another provider's own tool: Gemini cannot take it
                case ToolCallPart():
                    call, response, extra = self._call(part, names, chosen, limit)
                    parts.append(call)
                    responses.append(response)
                    images += extra
        flush()
        return turns

    def _own(self, part: Any) -> JSON | None:
        """A part's provider data when this transport's API issued it (Gemini's, from the same API), else ``None``."""
        data = own_data(part, PROVIDER_ID)
        if data is None or bool(data.get("vertexai")) != self._vertexai:
            return None
        return data

    def _signature(self, part: Any) -> str | None:
        data = self._own(part)
        signature = data.get("thought_signature") if data is not None else None
        return signature if is_base64(signature) else None

    def _reasoning(self, part: ReasoningPart, parts: list[JSON]) -> None:
        """A reasoning part: a signed thought summary, or a signature for the part before it (see the class docstring);
        nothing for reasoning Gemini did not sign or another provider's."""
        signature = self._signature(part)
        if signature is None:
            return
        if part.text:
            parts.append({"text": part.text, "thought": True, "thoughtSignature": signature})
        elif parts and "thoughtSignature" not in parts[-1]:
            parts[-1]["thoughtSignature"] = signature
        else:
            parts.append({"text": "", "thoughtSignature": signature})

    def _call(
        self, part: ToolCallPart, names: DisplayNames, chosen: RequestImages, limit: int | None
    ) -> tuple[JSON, JSON, list[JSON]]:
        """A local call's ``functionCall`` part, its ``functionResponse`` part, and the parts of a following user
        content with its images (when they do not go inside the response)."""
        data = self._own(part)
        call_id = data.get("id") if data is not None else None
        sent_id = call_id if isinstance(call_id, str) and call_id == part.tool_call_id else None
        call: JSON = {"functionCall": {"name": part.tool_name, "args": part.parsed_arguments}}
        if sent_id is not None:
            call["functionCall"]["id"] = sent_id
        signature = self._signature(part)
        if signature is not None:
            call["thoughtSignature"] = signature
        outcome = part.outcome
        failed = outcome is None or not outcome.ok
        images = chosen.of(part)
        response: JSON = {"error" if failed else "output": outcome_text(part, limit, images=len(images))}
        function_response: JSON = {"name": part.tool_name, "response": response}
        if sent_id is not None:
            function_response["id"] = sent_id
        following: list[JSON] = []
        if images and self.multimodal_function_responses:
            named = [(names.take(part.tool_name, image), image) for image in images]
            response["images"] = [{"$ref": name} for name, _ in named]
            function_response["parts"] = [image_part(image, name) for name, image in named]
        for image in images if not self.multimodal_function_responses else ():
            name = names.take(part.tool_name, image)
            following += [{"text": f"{name}, an image in the result of {part.tool_name}:"}, image_part(image)]
        return call, {"functionResponse": function_response}, following

    # --- stream mapping -----------------------------------------------------------------------------------------------

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's response to ``request``.

        The SDK reads Gemini's server-sent events itself (it sends the request when the first chunk is read, and
        closes the response at its end), so this is the one transport that does not read through ``sse_stream``;
        it follows the same steps: ``ResponseStarted`` once the response began (with its first chunk), each chunk to
        the parser, the parser's ``end`` after the last, the response closed however the reading ends.

        Raises:
            ProviderError: The request failed (HTTP status, timeout, connection, credentials, an error in the stream),
                or the reply went wrong (a blocked prompt, a malformed call); the message says why and never contains
                a key.
        """
        body = self.request_body(request)
        if not body.get("contents"):
            raise ProviderError(f"{LABEL} needs at least one message to answer")
        parser: StreamParser[Any] = GeminiParser(
            self._vertexai, model=self.model, provider=self.price_provider
        )  # the protocol every transport's parser keeps
        responded = False  # a chunk came: nothing is retried
        reading = False  # the request was built and handed to the SDK: a chunk it cannot read is the reply's fault
        try:
            # The body goes as it is (see the class docstring): the SDK merges ``extra_body`` over what it built,
            # ``contents`` included, so the history is not given to the SDK to be converted to its types and back
            # (nine tenths of a long request's CPU); a placeholder stands in. The config goes as a dict, which the
            # SDK reads into its type without the deep copy it makes of a config given as one (the whole body).
            config = {
                "automatic_function_calling": {"disable": True},
                "http_options": {"extra_body": body, "headers": self._deadline()},
            }
            aio = getattr(self._client, "aio", self._client)
            placeholder = [{"role": "user", "parts": [{"text": ""}]}]
            stream = await aio.models.generate_content_stream(model=self.model, contents=placeholder, config=config)
            reading = True
            try:
                async for chunk in stream:
                    if not responded:
                        responded = True
                        yield ResponseStarted()
                    for event in parser.feed(chunk):
                        yield event
            except genai_errors.UnknownApiResponseError as exc:
                if not cut_off(exc):
                    raise
                # A chunk cut off before its JSON ends, as the SDK hands on a last event without its blank line: the
                # reply ends there, as every transport's does (``_sse``), and reads as broken off unless finished.
            finally:
                await stream.aclose()  # closes the response at once, also when the turn stops mid-stream
            for event in parser.end():
                yield event
        except Exception as exc:
            error = self._map_error(exc, responded=responded, reading=reading)
            if error is None:
                raise
            raise classified(error) from None

    def _deadline(self) -> dict[str, str] | None:
        """The ``X-Server-Timeout`` header for a client with a timeout (see ``SERVER_DEADLINE``)."""
        options = getattr(getattr(self._client, "_api_client", None), "_http_options", None)
        timeout = getattr(options, "timeout", None)
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            return None  # no timeout: the SDK sends no deadline either
        return {"X-Server-Timeout": str(max(SERVER_DEADLINE, math.ceil(timeout / 1000)))}

    # --- error mapping ------------------------------------------------------------------------------------------------

    def _map_error(self, exc: Exception, *, responded: bool, reading: bool = False) -> ProviderError | None:
        """A clear, key-free error for what the SDK (or the connection under it) raised (``None``: raised as it is)."""
        hint = VERTEX_HINT if self._vertexai else KEY_HINT
        names = {cls.__name__ for cls in type(exc).__mro__}
        match exc:
            case ProviderError():  # raised by the parser: a blocked prompt, a malformed call
                return ProviderError(redact(str(exc), *self._secrets))
            case genai_errors.APIError():
                status = exc.status if isinstance(exc.status, str) else ""
                message = exc.message if isinstance(exc.message, str) else str(exc)
                detail = redact(f"{status}: {message}" if status and status not in message else message, *self._secrets)
                code = exc.code if isinstance(exc.code, int) else 0
                if responded:
                    return ProviderError(f"{LABEL} reported an error mid-reply ({code}): {detail}")
                if code == 400 and invalid_key(exc):
                    return ProviderError(f"{LABEL} rejected the API key (400): check {hint}. {detail}")
                return ProviderError(describe_status(LABEL, code, detail, key_hint=hint))
            case genai_errors.UnknownApiResponseError():
                return ProviderError(
                    f"{LABEL} sent a stream chunk that is not JSON: {redact(str(exc), *self._secrets)}"
                )
        if "ValidationError" in names:  # a chunk (or, before the request, the config) the SDK's types do not take
            detail = redact(str(exc), *self._secrets)[:500]
            return ProviderError(
                f"{LABEL}: the SDK could not read {'a chunk of the reply' if reading else 'the request'}: {detail}"
            )
        if "GoogleAuthError" in names:  # Vertex AI credentials that failed to load or refresh
            detail = redact(str(exc), *self._secrets)
            return ProviderError(f"{LABEL} (Vertex AI) could not get credentials: {detail}. Check {VERTEX_HINT}.")
        match http_failure(exc):
            case Failure.TIMEOUT:
                return timed_out(LABEL, seconds=self._timeout, responded=responded)
            case Failure.CONNECTION:
                cause = exc.__cause__ or exc
                if responded:
                    return broke_off(LABEL, cause=cause, secrets=self._secrets)
                return unreachable(LABEL, base_url=None, cause=cause, secrets=self._secrets)
        return None


def make_client(
    api_key: str | None,
    base_url: str | None,
    vertexai: bool | None,
    project: str | None,
    location: str | None,
    max_retries: int,
    timeout: float,
) -> Any:
    """A ``google.genai.Client`` for these settings, with retries and timeout (see :class:`GeminiTransport`)."""
    vertex = (
        vertexai if vertexai is not None else truthy_env("GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_USE_VERTEXAI")
    )
    if not vertex and not (api_key or os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")):
        if not (base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL")):
            raise missing_key(LABEL, KEY_VARIABLES)
        api_key = NO_KEY  # a local server or proxy may need no key; a remote one answers with a message about it
    options = genai_types.HttpOptions(
        base_url=base_url,
        timeout=max(1, round(timeout * 1000)),
        # Backoff from half a second, as the OpenAI and Anthropic SDKs wait (the SDK's own starts at a second).
        retry_options=genai_types.HttpRetryOptions(
            attempts=max_retries + 1, initial_delay=0.5, max_delay=8.0, jitter=0.25
        ),
    )
    try:
        return genai.Client(
            vertexai=vertexai, api_key=api_key, project=project, location=location, http_options=options
        )
    except Exception as exc:  # missing project or credentials for Vertex AI, and the like
        detail = redact(str(exc), api_key)
        hint = f" Check {VERTEX_HINT}." if vertex else ""
        raise ProviderError(f"{LABEL} client could not be created: {detail}{hint}") from None


# What a JSON value cut off before its end may end in, where Python's reader stops: a number, or part of a literal.
PARTIAL_VALUE = re.compile(r"[-+.eE0-9]*|t(r(ue?)?)?|f(a(l(se?)?)?)?|n(u(ll?)?)?")


def cut_off(exc: Exception) -> bool:
    """Whether the chunk the SDK could not read is JSON that stops before its end (a prefix of a JSON value), rather
    than data that is not JSON. The SDK does not say whether the chunk was the body's last, so the data tells."""
    error = exc.__cause__
    if not isinstance(error, json.JSONDecodeError):
        return False
    if error.msg.startswith("Unterminated string"):  # no closing quote up to the end: cut inside a string
        return True
    return PARTIAL_VALUE.fullmatch(error.doc[error.pos :].rstrip()) is not None


def invalid_key(exc: Any) -> bool:
    """Whether a 400 is Gemini's answer to a key that is not valid (it does not use 401 for that)."""
    try:
        text = json.dumps(exc.details)
    except (TypeError, ValueError):
        text = str(exc)
    return "API_KEY_INVALID" in text or "API key not valid" in text


def sign_first_call(parts: list[JSON]) -> list[JSON]:
    """``parts`` with the dummy signature on the first function call when it has none (see the class docstring)."""
    for part in parts:
        if "functionCall" in part:
            part.setdefault("thoughtSignature", SKIP_SIGNATURE)
            break
    return parts


def is_base64(value: Any) -> bool:
    """Whether ``value`` is base64 text (standard or URL-safe alphabet) that decodes."""
    if not isinstance(value, str) or not value:
        return False
    try:
        base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def image_part(image: ModelImage, display_name: str | None = None) -> JSON:
    """An image as an ``inlineData`` part (or ``fileData``, for a URL), with its ``displayName`` inside a function
    response."""
    media: JSON = {"mimeType": image.media_type}
    if image.data is not None:
        key, media["data"] = "inlineData", image.data
    else:
        key, media["fileUri"] = "fileData", image.url
    if display_name is not None:
        media["displayName"] = display_name
    return {key: media}


class DisplayNames:
    """Names for the images of one request, unique in it: ``<tool>-<n>.<extension>``."""

    __slots__ = ("_count",)

    def __init__(self) -> None:
        self._count = 0

    def take(self, tool_name: str, image: ModelImage) -> str:
        self._count += 1
        return f"{tool_name}-{self._count}{EXTENSIONS.get(image.media_type, '')}"


EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}
