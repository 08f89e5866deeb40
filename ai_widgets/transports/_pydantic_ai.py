"""The transport to any model pydantic-ai supports (``PydanticAITransport``): its construction, the request it makes
of pydantic-ai's ``Model.request_stream`` and how its errors read (the stream is read in ``_pydantic_ai_stream``)."""

from __future__ import annotations

import base64
import binascii
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from typing import Any, Literal, cast

from ai_widgets.transports._client import import_sdk

import_sdk("pydantic_ai", "pydantic-ai")  # says which extra to install when pydantic-ai is missing

from pydantic import TypeAdapter, ValidationError  # noqa: E402
from pydantic_ai import exceptions as pai_errors  # noqa: E402
from pydantic_ai import messages as pai  # noqa: E402
from pydantic_ai.models import Model, ModelRequestParameters, infer_model  # noqa: E402
from pydantic_ai.output import OutputObjectDefinition  # noqa: E402
from pydantic_ai.settings import ModelSettings  # noqa: E402
from pydantic_ai.tools import ToolDefinition as PydanticAIToolDefinition  # noqa: E402

from ai_widgets.events import ResponseStarted, StreamEvent  # noqa: E402
from ai_widgets.messages import FilePart, Message, ReasoningPart, Role, TextPart, ToolCallPart, ToolCallState  # noqa: E402
from ai_widgets.messages._usage import price_provider_for_url  # noqa: E402
from ai_widgets.options import DEFAULT_MAX_TOOL_RESULT_CHARS, RequestOptions  # noqa: E402
from ai_widgets.tools import ToolDefinition  # noqa: E402
from ai_widgets.transports._base import ChatRequest, TransportProfile  # noqa: E402
from ai_widgets.transports._errors import (  # noqa: E402
    ContextTooLongError,
    Failure,
    ProviderError,
    broke_off,
    classified,
    describe_status,
    http_failure,
    timed_out,
    unreachable,
)
from ai_widgets.transports._history import (  # noqa: E402
    ModelImage,
    RequestImages,
    arguments_json,
    history,
    outcome_text,
    own_data,
    user_parts,
)
from ai_widgets.transports._output import output_name  # noqa: E402
from ai_widgets.transports._pydantic_ai_stream import PROVIDER_ID, PartsReader  # noqa: E402

__all__ = ["PydanticAITransport"]

#: Images of tool results one request carries (the providers' tightest limits among those pydantic-ai supports:
#: 5 MB an image, as Anthropic; 20 images and 20 MB of them, well inside OpenAI's and Gemini's).
MAX_IMAGE_CHARS = 5 * 1024 * 1024
MAX_REQUEST_IMAGE_CHARS = 20 * 1024 * 1024
MAX_REQUEST_IMAGES = 20

NATIVE_CALL = TypeAdapter(pai.NativeToolCallPart)
NATIVE_RETURN = TypeAdapter(pai.NativeToolReturnPart)
THINKING = TypeAdapter(pai.ThinkingPart)


class PydanticAITransport:
    """Any model pydantic-ai supports, through its model classes (``Model.request_stream``): OpenAI, Anthropic,
    Gemini, Groq, Mistral, Bedrock, Cohere, Hugging Face, OpenRouter, Ollama... and its ``TestModel`` and
    ``FunctionModel``.

    Args:
        model: A ``pydantic_ai.models.Model``, or a model name as pydantic-ai reads it (``"openai:gpt-5"``,
            ``"anthropic:claude-sonnet-4-5"``, ``"groq:llama-3.3-70b-versatile"``, ``"test"``), resolved with
            ``pydantic_ai.models.infer_model`` (the provider's key from its usual environment variable).
        settings: ``pydantic_ai.settings.ModelSettings`` sent with every request (``thinking``, ``seed``,
            ``openai_reasoning_effort``...); the request's options override the keys they set.
        tool_images: Send the images of tool results to the model (inside the tool's return, as pydantic-ai sends
            multimodal returns: the model classes that cannot put images in a tool result move them to a user
            message).

    Raises:
        TypeError: ``model`` is neither a pydantic-ai model nor a model name, or ``settings`` is not a mapping.
        ValueError: The model name is empty, or pydantic-ai does not know it.
        ProviderError: pydantic-ai could not set up the model's provider (no API key, a missing SDK).

    Mapping:

    - Request: the system prompt as a ``SystemPromptPart`` first; a user message as a ``UserPromptPart`` (text,
      and files as ``BinaryContent`` or, by URL, ``ImageUrl``/``DocumentUrl``/``AudioUrl``/``VideoUrl``); a reply as
      one ``ModelResponse`` per round (``TextPart``, ``ThinkingPart``, ``ToolCallPart`` with the arguments as JSON
      text), each round of local calls followed by a ``ModelRequest`` of ``ToolReturnPart``\\ s, in order: the text
      the model is told, with the result's images (``outcome`` ``'failed'`` for failed, cancelled and skipped
      calls, ``'denied'`` for declined ones, which pydantic-ai's model classes send as errors). The next user text
      joins that request, as pydantic-ai's agents send it. The history is then prepared by the model's own
      ``prepare_messages``, as an agent run prepares it.
    - Provider data: thinking keeps its signature, id and provider details (``{"parts": [...]}``, every thinking
      part of a run, as the session joins them into one reasoning part), and a provider-run call
      (``NativeToolCallPart``, with its ``NativeToolReturnPart``) keeps both parts as they came, under the provider
      ``"pydantic_ai"``; pydantic-ai's model classes decide what of it their provider takes back (a signature only
      by the provider that made it), as does a local call's item id. Reasoning of another transport goes as a
      plain ``ThinkingPart``; another transport's provider-run calls are left out. An ``OpenAIResponsesModel``
      gets ``openai_send_reasoning_ids=False`` unless ``settings`` says otherwise: the API refuses a reasoning
      item sent back without the item that followed it, and a text part's item id is not kept (its reasoning
      then goes back as text, and OpenAI's own server-side tool items are not sent back).
    - Tools: each definition as a function ``ToolDefinition`` (its JSON Schema as it is). ``tool_choice``:
      ``auto``, ``required``, and a specific tool as ``[name]``; with ``ToolChoice.NONE`` no tools are sent.
      A model class that cannot honour it raises, and the reply ends with that error.
    - A typed answer (``ChatRequest.output_schema``): native structured output (``output_mode='native'``) where
      the model's profile supports JSON Schema output, else prompted output (pydantic-ai's instruction with the
      schema); the answer arrives as text either way, and the session validates it.
    - Options: ``temperature``, ``max_tokens``, ``cache`` (pydantic-ai's unified ``cache``) into the settings;
      ``options.extra`` is merged into them last, so any ``ModelSettings`` key can be set per session.
    - Stream: text, thinking and tool-call parts as they stream (see ``_pydantic_ai_stream``); the usage the
      response reports, the model it names and the provider of the model's base URL (for the price); the finish
      reason as pydantic-ai normalises it (``tool_call`` is ``tool_calls``; none given: ``tool_calls`` when there
      are local calls, else ``stop``). Files, compaction and speech parts of a response are not kept.
    - Stop: closing the stream leaves pydantic-ai's response context at once, which closes the provider's stream
      (its HTTP response; a ``FunctionModel``'s generator).
    - Errors: pydantic-ai's ``ModelAPIError``\\ s (HTTP statuses worded as the native transports word them),
      ``UnexpectedModelBehavior`` and ``UserError`` raise :class:`ProviderError`; a request past the context
      window (``ModelContextWindowExceededError``, or a provider's words for it) raises
      :class:`ContextTooLongError`.
    """

    def __init__(
        self, model: Model | str, *, settings: Mapping[str, Any] | None = None, tool_images: bool = True
    ) -> None:
        if settings is not None and not isinstance(settings, Mapping):
            raise TypeError(f"settings must be a pydantic-ai ModelSettings dict, not {type(settings).__name__}")
        self.model: Model = resolve(model)
        self.settings: dict[str, Any] = dict(settings or {})
        if any(cls.__name__ == "OpenAIResponsesModel" for cls in type(self.model).__mro__):
            # The API refuses a reasoning item sent back without the very item that followed it ("provided without
            # its required following item"), and a text part's item id does not survive the session's history.
            self.settings.setdefault("openai_send_reasoning_ids", False)
        self.tool_images = tool_images
        #: genai-prices' id of the provider at the model's base URL, for the cost (``None``: not known).
        self.price_provider = price_provider_for_url(base_url(self.model))
        self._label = f"{self.model.system} model {self.model.model_name!r} (pydantic-ai)"

    def __repr__(self) -> str:
        return f"PydanticAITransport({self.model.system}:{self.model.model_name})"

    @property
    def profile(self) -> TransportProfile:
        """What this transport is: the provider at the model's base URL (``price_provider``), the model's name, its
        context window as its pydantic-ai profile gives it (``None`` when it does not say), and the output limit
        ``settings`` ask for (``max_tokens``). No attachment limits are known: pydantic-ai's model class sends the
        files its provider's way, and the provider refuses what it does not take."""
        return TransportProfile(
            provider=self.price_provider,
            model=self.model.model_name,
            context_window=context_window(self.model),
            max_output_tokens=max_tokens(self.settings),
        )

    # --- request mapping ----------------------------------------------------------------------------------------------

    def request_messages(
        self,
        messages: Iterable[Message],
        *,
        system_prompt: str | None = None,
        max_tool_result_chars: int | None = DEFAULT_MAX_TOOL_RESULT_CHARS,
    ) -> list[pai.ModelMessage]:
        """The history as pydantic-ai messages (before the model's ``prepare_messages``): requests and responses,
        tool returns right after their calls (each cut to ``max_tool_result_chars``, see ``RequestOptions``)."""
        out: list[pai.ModelMessage] = []
        if system_prompt:
            out.append(pai.ModelRequest(parts=[pai.SystemPromptPart(system_prompt)]))
        messages = list(history(messages))
        images = (
            RequestImages(
                messages,
                max_chars=MAX_IMAGE_CHARS,
                max_total_chars=MAX_REQUEST_IMAGE_CHARS,
                max_count=MAX_REQUEST_IMAGES,
            )
            if self.tool_images
            else None
        )
        for message in messages:
            if message.role is Role.USER:
                content = [user_content(part) for part in user_parts(message)]
                if content:
                    prompt = content[0] if len(content) == 1 and isinstance(content[0], str) else content
                    add_request(out, [pai.UserPromptPart(prompt)])
            else:
                for response, returns in rounds(message, images=images, limit=max_tool_result_chars):
                    if response:
                        out.append(pai.ModelResponse(parts=response))
                    if returns:
                        add_request(out, returns)
        return out

    def request_settings(self, options: RequestOptions) -> ModelSettings:
        """The ``ModelSettings`` of a request: the transport's, the request's options, then ``options.extra``."""
        settings: dict[str, Any] = dict(self.settings)
        if options.temperature is not None:
            settings["temperature"] = options.temperature
        if options.max_tokens is not None:
            settings["max_tokens"] = options.max_tokens
        if options.cache:
            settings["cache"] = True
        match options.tool_choice.mode:
            case "required":
                settings["tool_choice"] = "required"
            case "tool":
                settings["tool_choice"] = [options.tool_choice.tool_name]
            case _:  # "auto" for this request (or no tools at all), whatever the transport's settings say
                settings.pop("tool_choice", None)
        settings.update(options.extra)
        # Any model class's keys (``openai_reasoning_effort``...): its settings are a TypedDict extending these.
        return cast(ModelSettings, settings)

    def request_parameters(self, request: ChatRequest) -> ModelRequestParameters:
        """The tools and the output mode of a request."""
        tools = [] if request.options.tool_choice.mode == "none" else [tool(d) for d in request.tools]
        schema = request.output_schema
        if schema is None:
            return ModelRequestParameters(function_tools=tools)
        output = OutputObjectDefinition(
            json_schema=schema, name=output_name(schema), description=schema.get("description")
        )
        native = bool(profile(self.model).get("supports_json_schema_output"))
        return ModelRequestParameters(
            function_tools=tools, output_mode="native" if native else "prompted", output_object=output
        )

    # --- stream mapping -----------------------------------------------------------------------------------------------

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Streams the model's response to ``request``.

        Raises:
            ProviderError: The request failed, or pydantic-ai refused it or the model's answer; the message says
                why. :class:`ContextTooLongError` for a request past the model's context window.
        """
        return self._stream(request)

    async def _stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        options = request.options
        messages = self.request_messages(
            request.messages, system_prompt=options.system_prompt, max_tool_result_chars=options.max_tool_result_chars
        )
        settings = self.request_settings(options)
        parameters = self.request_parameters(request)
        model = self.model
        reader = PartsReader()
        responded = False
        try:
            messages = model.prepare_messages(messages, parameters)
            async with model.request_stream(messages, settings, parameters) as response:
                responded = True
                yield ResponseStarted()
                # Closed here when the session stops the reply: pydantic-ai's chain of event generators ends at once,
                # and leaving the response's context closes the provider's stream (its HTTP response).
                events = response.__aiter__()
                try:
                    async for event in events:
                        for out in reader.feed(event):
                            yield out
                finally:
                    if isinstance(events, AsyncGenerator):
                        await events.aclose()
                provider = price_provider_for_url(response.provider_url) or self.price_provider
                for out in reader.finish(response, provider=provider):
                    yield out
        except Exception as exc:
            mapped = self._map_error(exc, responded=responded)
            if mapped is None:
                raise
            raise mapped from exc

    # --- error mapping ------------------------------------------------------------------------------------------------

    def _map_error(self, exc: Exception, *, responded: bool) -> ProviderError | None:
        """A clear error for what pydantic-ai (or the HTTP library under its model class) raised, the one place its
        errors are worded; ``None`` for anything else (a ``FunctionModel``'s own exception), raised as it is."""
        label = self._label
        match http_failure(exc):  # what a model class lets through from its HTTP library while the body streams
            case Failure.TIMEOUT:
                return timed_out(label, seconds=None, responded=responded)
            case Failure.CONNECTION if responded:
                return broke_off(label, cause=exc, secrets=())
            case Failure.CONNECTION:
                return unreachable(label, base_url=base_url(self.model), cause=exc, secrets=())
        match exc:
            case pai_errors.ModelContextWindowExceededError():
                detail = provider_detail(exc)
                sized = classified(ProviderError(detail))  # the sizes, where the provider's words state them
                tokens, limit = (sized.tokens, sized.limit) if isinstance(sized, ContextTooLongError) else (None, None)
                message = f"{label} refused the request as longer than the model's context window: {detail}"
                return ContextTooLongError(message, tokens=tokens, limit=limit)
            case pai_errors.ModelTimeoutError():
                return timed_out(label, seconds=None, responded=responded)
            case pai_errors.ModelConnectionError() if responded:
                return broke_off(label, cause=exc.__cause__ or exc, secrets=())
            case pai_errors.ModelConnectionError():
                return unreachable(label, base_url=base_url(self.model), cause=exc.__cause__ or exc, secrets=())
            case pai_errors.ModelHTTPError():
                detail = provider_detail(exc)
                key_hint = "the provider's API key variable (see pydantic-ai's docs for the provider)"
                return classified(ProviderError(describe_status(label, exc.status_code, detail, key_hint=key_hint)))
            case pai_errors.ModelAPIError():
                return classified(ProviderError(f"{label} request failed: {provider_detail(exc)}"))
            case pai_errors.UnexpectedModelBehavior():
                return ProviderError(f"{label} answered in a way pydantic-ai could not read: {exc.message}")
            case pai_errors.UserError():
                return ProviderError(f"pydantic-ai refused the request to {label}: {exc.message}")
            case pai_errors.AgentRunError():
                return ProviderError(f"{label} failed: {exc}")
        return None


# --- construction -----------------------------------------------------------------------------------------------------


def resolve(model: object) -> Model:
    if isinstance(model, Model):
        return model
    if not isinstance(model, str):
        raise TypeError(
            "model must be a pydantic-ai Model (pydantic_ai.models.Model) or a model name such as 'openai:gpt-5', "
            f"not {type(model).__name__}"
        )
    if not model.strip():
        raise ValueError("a model name is needed, e.g. PydanticAITransport('openai:gpt-5')")
    try:
        return infer_model(model)
    except pai_errors.UserError as exc:
        if str(exc).startswith("Unknown model"):
            raise ValueError(f"pydantic-ai does not know the model {model!r}: {exc.message}") from None
        raise ProviderError(f"pydantic-ai could not set up the model {model!r}: {exc.message}") from exc
    except ImportError as exc:
        raise ProviderError(f"pydantic-ai could not set up the model {model!r}: {exc}") from exc


def profile(model: Model) -> Mapping[str, Any]:
    try:
        profile: Mapping[str, Any] = model.profile
    except NotImplementedError:  # a router (FallbackModel) has no one profile
        return {}
    return profile


def context_window(model: Model) -> int | None:
    window = profile(model).get("context_window")
    return window if isinstance(window, int) and not isinstance(window, bool) and window > 0 else None


def max_tokens(settings: Mapping[str, Any]) -> int | None:
    asked = settings.get("max_tokens")
    return asked if type(asked) is int and asked > 0 else None


def base_url(model: Model) -> str | None:
    with contextlib.suppress(Exception):  # a model class whose base URL needs a client it has not built
        url = model.base_url
        return url if isinstance(url, str) else None
    return None


def provider_detail(exc: pai_errors.ModelAPIError) -> str:
    """The provider's own message: from the error body where it has one (``{"error": {"message": ...}}`` and the
    like), else pydantic-ai's text (which for an HTTP error repeats the status and the model)."""
    body = exc.body
    found: object = None
    for _ in range(3):  # {"error": {"message": ...}}, {"message": ...}, [{"error": ...}] (Gemini's list)
        if isinstance(body, list) and body:
            body = body[0]
        if not isinstance(body, dict):
            break
        found = body.get("message")
        if isinstance(found, str):
            break
        body = body.get("error")
    text = found if isinstance(found, str) and found else str(exc)
    return " ".join(text.split())[:2000]


# --- request mapping --------------------------------------------------------------------------------------------------


def tool(definition: ToolDefinition) -> PydanticAIToolDefinition:
    return PydanticAIToolDefinition(
        name=definition.name,
        parameters_json_schema=definition.parameters,
        description=definition.description or None,
        sequential=definition.sequential,
    )


def add_request(out: list[pai.ModelMessage], parts: list[Any]) -> None:
    """Adds request parts, joined to the request before them (tool returns and the user text after them go as one
    request, as pydantic-ai's agents send them)."""
    last = out[-1] if out else None
    if isinstance(last, pai.ModelRequest):
        last.parts = [*last.parts, *parts]
    else:
        out.append(pai.ModelRequest(parts=parts))


def user_content(part: TextPart | FilePart) -> Any:
    if isinstance(part, TextPart):
        return part.text
    media_type = part.media_type
    if part.url is not None:
        major = media_type.split("/")[0]
        url_class = {"image": pai.ImageUrl, "audio": pai.AudioUrl, "video": pai.VideoUrl}.get(major, pai.DocumentUrl)
        return url_class(url=part.url, media_type=media_type)
    try:
        data = base64.b64decode(part.data or "", validate=True)
    except (binascii.Error, ValueError):
        return f"[A file was attached here that could not be read, so it is left out: {part.describe()}]"
    return pai.BinaryContent(data=data, media_type=media_type)


def rounds(message: Message, *, images: RequestImages | None, limit: int | None) -> list[tuple[list[Any], list[Any]]]:
    """One reply as pydantic-ai responses, each round of local calls with the request of their returns."""
    rounds: list[tuple[list[Any], list[Any]]] = []
    response: list[Any] = []
    returns: list[Any] = []
    for part in message.parts:
        local_call = isinstance(part, ToolCallPart) and not part.provider_executed
        if returns and not local_call:  # the model saw these returns: what follows is its next response
            rounds.append((response, returns))
            response, returns = [], []
        match part:
            case TextPart():
                if text := part.text:
                    response.append(pai.TextPart(text))
            case ReasoningPart():
                response += thinking_parts(part)
            case ToolCallPart() if part.provider_executed:
                response += native_parts(part)
            case ToolCallPart():
                response.append(tool_call(part))
                returns.append(tool_return(part, images=images, limit=limit))
    rounds.append((response, returns))
    return rounds


def tool_call(part: ToolCallPart) -> pai.ToolCallPart:
    """A local call as pydantic-ai's part, with the provider's item id and details it streamed with."""
    data = own_data(part, PROVIDER_ID) or {}
    provider_name = data.get("provider_name")
    details = data.get("provider_details")
    item_id = data.get("id")
    named = isinstance(provider_name, str)  # pydantic-ai takes an id or details only with the provider's name
    return pai.ToolCallPart(
        part.tool_name,
        arguments_json(part),
        part.tool_call_id,
        id=item_id if named and isinstance(item_id, str) else None,
        provider_name=provider_name if named else None,
        provider_details=details if named and isinstance(details, dict) else None,
    )


def tool_return(part: ToolCallPart, *, images: RequestImages | None, limit: int | None) -> pai.ToolReturnPart:
    pictures = images.of(part) if images is not None else []
    text = outcome_text(part, limit, images=len(pictures))
    content: Any = [text, *(image(picture) for picture in pictures)] if pictures else text
    outcome: Literal["success", "failed", "denied"]
    if part.outcome is not None and part.outcome.ok:
        outcome = "success"
    else:
        outcome = "denied" if part.state is ToolCallState.REJECTED else "failed"
    return pai.ToolReturnPart(part.tool_name, content, part.tool_call_id, outcome=outcome)


def image(image: ModelImage) -> Any:
    if image.url is not None:
        return pai.ImageUrl(url=image.url, media_type=image.media_type)
    return pai.BinaryContent(data=base64.b64decode(image.data or ""), media_type=image.media_type)


def thinking_parts(part: ReasoningPart) -> list[pai.ThinkingPart]:
    """The thinking parts a reasoning part stands for: those this transport streamed, each with its signature, or
    its text as one plain thinking part (another transport's reasoning)."""
    data = own_data(part, PROVIDER_ID)
    stored = data.get("parts") if data is not None else None
    if isinstance(stored, list) and stored:
        try:
            return [THINKING.validate_python(item) for item in stored]
        except ValidationError:
            pass  # not what this transport stored (an edited history file): the text alone
    return [pai.ThinkingPart(part.text)] if part.text else []


def native_parts(part: ToolCallPart) -> list[Any]:
    """A provider-run call as it came (its call and return parts), or nothing: another transport's, or one whose
    result never arrived (a provider refuses a call of its own tool without its result)."""
    data = own_data(part, PROVIDER_ID)
    if data is None or "call" not in data or "return" not in data:
        return []
    try:
        return [NATIVE_CALL.validate_python(data["call"]), NATIVE_RETURN.validate_python(data["return"])]
    except ValidationError:
        return []
