"""Old name of assistant/llm.py, kept only while bench/answer_quality.py (being edited) imports it; remove then."""

from assistant.llm import *  # noqa: F403
from assistant.llm import background_priority, chat_model

__all__ = ["background_priority", "chat_model"]
