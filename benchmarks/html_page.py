"""The explain page at scale in headless Chromium (issue 33, item 6): its size, how long it
takes to load and paint, to highlight a click, to draw the aligned and stepping views, and
to check an exercise answer, for `sin(x) * 0.5 + x` repeated to about 10,000 traced
operations. It measures; it asserts nothing.

    python -m benchmarks.html_page [--operations 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import shax
import shax.numpy as jnp
from shax import f32

# One click's cost: the handler, then the frame after it (layout and paint).
CLICK = """async selector => {
  const target = document.querySelector(selector), start = performance.now();
  target.click();
  await new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)));
  return performance.now() - start;
}"""


# One answer's check: the handler evaluating it and writing the verdict.
CHECK = """() => {
  const box = document.querySelector("input.answer"), start = performance.now();
  box.value = "mul (cos x0) x1";
  box.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true}));
  return performance.now() - start;
}"""


def chain(n: int) -> Any:
    def f(x: Any) -> Any:
        for _ in range(n):
            x = jnp.sin(x) * 0.5 + x
        return jnp.sum(x)

    return f


def loaded(browser: Any, path: Path) -> tuple[Any, float]:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(60_000)
    start = time.perf_counter()
    page.goto(path.as_uri(), wait_until="load")
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)))")
    return page, time.perf_counter() - start


def clicked(page: Any, selector: str) -> float:
    return float(page.evaluate(CLICK, selector)) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operations", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    f = chain(max(1, args.operations // 3))  # sin, mul, add per round
    start = time.perf_counter()
    e = shax.explain(f, f32[3])
    explained = time.perf_counter() - start
    start = time.perf_counter()
    text = e.to_html()
    written = time.perf_counter() - start
    start = time.perf_counter()
    exercise = e.exercise("sin").to_html()
    written_exercise = time.perf_counter() - start
    print(f"{len(e.traced.bindings)} traced operations; explain {explained:.1f} s, the page written in "
          f"{written:.1f} s, the exercise page in {written_exercise:.1f} s")  # fmt: skip
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))))
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=found, args=["--no-sandbox", "--disable-gpu"], headless=True)
        for name, html in (("page", text), ("exercise page", exercise)):
            path = Path(tmp) / f"{name.replace(' ', '_')}.html"
            path.write_text(html, encoding="utf-8")
            times: dict[str, list[float]] = {}
            for _ in range(args.rounds):
                page, load = loaded(browser, path)
                times.setdefault("load and first paint", []).append(load)
                if name == "page":
                    for k in range(3):
                        times.setdefault("a click highlights", []).append(
                            clicked(page, f'details[data-stage="trace"] .b[data-i="{2 + 40 * k}"]')
                        )
                    times.setdefault("aligned view, first drawn", []).append(
                        clicked(page, '.views button[data-view="aligned"]')
                    )
                    times.setdefault("steps view, first drawn", []).append(
                        clicked(page, '.views button[data-view="steps"]')
                    )
                    times.setdefault("a step", []).append(clicked(page, '.steplist li[data-k="4"]'))
                else:
                    times.setdefault("an answer checked", []).append(float(page.evaluate(CHECK)) / 1000)
                page.close()
            print(f"{name}: {len(html.encode()) / 1e6:.2f} MB")
            for what, seconds in times.items():
                low, high = min(seconds), max(seconds)
                median = statistics.median(seconds)
                print(f"  {what}: {median * 1000:.0f} ms (range {low * 1000:.0f}-{high * 1000:.0f})")
        browser.close()


if __name__ == "__main__":
    main()
