"""The app's theme: Gradio's default layout with colours whose text meets WCAG AA contrast (4.5:1 for body
text, checked in the browser by axe-core in tests/test_newcomer.py) in light and dark mode, and system fonts
only (no font is fetched from anywhere).

The ratios below are against the page background (#ffffff light, #0f172a dark) and the panel background
(#f8fafc / #1e293b); each is noted where it was the tight one.
"""

from __future__ import annotations

from typing import Any

# light                       dark
TEXT = ("#111827", "#f1f5f9")
SUBDUED = ("#4b5563", "#cbd5e1")  # 7.2:1 on #f8fafc; 9.9:1 on #1e293b: passages, notes, counts
ACCENT = ("#1d4ed8", "#93c5fd")  # links and the primary button (white on #1d4ed8: 6.7:1)
ERROR = ("#b91c1c", "#fca5a5")  # 5.9:1 on #fef2f2
SYSTEM_FONTS = ("ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "Roboto", "Helvetica Neue", "Arial",
                "sans-serif")
MONO_FONTS = ("ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "Liberation Mono", "monospace")


def app_theme() -> Any:
    """A gr.themes.Default with accessible text colours; built lazily so importing this costs nothing."""
    import gradio as gr

    theme = gr.themes.Default(
        primary_hue=gr.themes.colors.blue, secondary_hue=gr.themes.colors.slate, neutral_hue=gr.themes.colors.slate,
        font=list(SYSTEM_FONTS), font_mono=list(MONO_FONTS),
    )
    return theme.set(
        body_text_color=TEXT[0], body_text_color_dark=TEXT[1],
        body_text_color_subdued=SUBDUED[0], body_text_color_subdued_dark=SUBDUED[1],
        block_label_text_color=SUBDUED[0], block_label_text_color_dark=SUBDUED[1],
        block_info_text_color=SUBDUED[0], block_info_text_color_dark=SUBDUED[1],
        block_title_text_color=TEXT[0], block_title_text_color_dark=TEXT[1],
        accordion_text_color=TEXT[0], accordion_text_color_dark=TEXT[1],
        checkbox_label_text_color=TEXT[0], checkbox_label_text_color_dark=TEXT[1],
        table_text_color=TEXT[0], table_text_color_dark=TEXT[1],
        input_placeholder_color=SUBDUED[0], input_placeholder_color_dark=SUBDUED[1],
        link_text_color=ACCENT[0], link_text_color_dark=ACCENT[1],
        link_text_color_hover="#1e40af", link_text_color_hover_dark="#bfdbfe",
        link_text_color_visited="#6d28d9", link_text_color_visited_dark="#c4b5fd",
        link_text_color_active=ACCENT[0], link_text_color_active_dark=ACCENT[1],
        button_primary_background_fill=ACCENT[0], button_primary_background_fill_dark="#1e40af",
        button_primary_background_fill_hover="#1e40af", button_primary_background_fill_hover_dark="#1d4ed8",
        button_primary_text_color="#ffffff", button_primary_text_color_dark="#ffffff",
        button_primary_text_color_hover="#ffffff", button_primary_text_color_hover_dark="#ffffff",
        button_secondary_text_color=TEXT[0], button_secondary_text_color_dark=TEXT[1],
        error_text_color=ERROR[0], error_text_color_dark=ERROR[1],
    )
