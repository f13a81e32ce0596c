"""Drives a flame graph SVG in headless Chromium, as a person would.

Usage: browser.py URL FOLDED SHOTS_DIR PROFILE_DIR

URL is an SVG of ours (served by nginx with contrib's snippet), FOLDED the
folded file of the same window, SHOTS_DIR where a PNG of each step goes, PROFILE_DIR a fresh directory for
Chromium's profile.
Every step acts through the page's own UI (mouse clicks, the '/' key and the
prompt it opens, hovering) and checks what a person would see:

  1. load: frames drawn, Reset Zoom hidden
  2. click a leaf: it fills the width, its ancestors stay (full width,
     faded), its siblings are hidden, Reset Zoom shows
  3. search a regular expression: "Matched: x%" equals the share of
     samples whose stack has a matching frame, computed from FOLDED
  4. Reset Zoom: every frame back at its width, Reset Zoom hidden
  5. hover a frame: the details line shows its name, samples and percent,
     which agree with FOLDED
  6. the browser's console holds no error (a CSP violation would be one)

Prints one "ok: ..." line per step; exits 1 with the reason on a failure.
"""
import os
import re
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1400,1000",
]
# Matches part of the samples: burn_thirty and the kernel's interrupt and
# scheduler frames, which also occur under a matched burn_thirty (the page
# must count such a sample once).
SEARCH = r"thirty|interrupt|irq|sched"
ZOOM_TO = "burn_thirty"
HOVER = "burn_seventy"


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def shown_name(folded_name):
    """A frame's name as the SVG shows it: the folded text's kind suffix
    (_[k] kernel, _[j] JIT, _[i] inlined) is drawn as a colour, not text."""
    return re.sub(r"_\[[kji]\]$", "", folded_name)


def load_folded(path):
    stacks = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            stacks.append((stack.split(";"), int(count)))
    return stacks


# The state of every frame as the page shows it, in document order.
FRAMES_JS = """
return Array.from(document.getElementById('frames').children).map(function (g) {
  var r = g.querySelector('rect');
  return { title: g.firstElementChild.textContent, shown: g.style.display !== 'none',
           up: g.classList.contains('up'), x: +r.getAttribute('x'),
           w: +r.getAttribute('width'), y: +r.getAttribute('y'), fill: r.getAttribute('fill') };
});
"""


def frames(driver):
    return driver.execute_script(FRAMES_JS)


def name_of(frame):
    return frame["title"].rsplit(" (", 1)[0]


def element_of(driver, name):
    """The <g> of the widest frame named name (the hot path's)."""
    gs = [g for g in driver.find_elements(By.CSS_SELECTOR, "#frames > g")
          if g.find_element(By.TAG_NAME, "title").get_attribute("textContent")
          .startswith(name + " (")]
    if not gs:
        fail("no frame named %s" % name)
    return max(gs, key=lambda g: int(g.get_attribute("data-n")))


def widest_path(stacks, name):
    """The call path (root first) of the node named name with the most
    samples in the folded stacks, and those samples."""
    totals = {}
    for stack, c in stacks:
        for i, fr in enumerate(stack):
            if fr == name:
                path = tuple(stack[:i + 1])
                totals[path] = totals.get(path, 0) + c
    if not totals:
        fail("the folded file has no frame %s" % name)
    path = max(totals, key=totals.get)
    return list(path), totals[path]


def shoot(driver, shots, step):
    path = os.path.join(shots, step + ".png")
    driver.save_screenshot(path)
    return path


def main():
    url, folded_path, shots, profile = sys.argv[1:5]
    os.makedirs(shots, exist_ok=True)
    stacks = load_folded(folded_path)
    total = sum(c for _, c in stacks)

    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    opts.add_argument("--user-data-dir=" + profile)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    try:
        run(driver, url, stacks, total, shots)
    finally:
        driver.quit()


def run(driver, url, stacks, total, shots):
    driver.get(url)
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "frames"))
    svg = driver.find_element(By.TAG_NAME, "svg")
    width = float(svg.get_attribute("width"))
    pad = float(svg.get_attribute("data-pad"))
    full = width - 2 * pad
    reset = driver.find_element(By.ID, "reset")

    # 1. loaded
    fs = frames(driver)
    if len(fs) < 4 or not all(f["shown"] for f in fs):
        fail("loaded: %d frames, not all shown" % len(fs))
    if abs(fs[0]["w"] - full) > 0.1:
        fail("loaded: the root is %.1f px wide, want %.1f" % (fs[0]["w"], full))
    if reset.value_of_css_property("visibility") != "hidden":
        fail("loaded: Reset Zoom is visible")
    print("ok: 1 loaded: %d frames, root %.1f px (%s)" % (len(fs), fs[0]["w"], shoot(driver, shots, "1-loaded")))

    # 2. click the leaf burn_thirty
    target = element_of(driver, ZOOM_TO)
    ActionChains(driver).move_to_element(target.find_element(By.TAG_NAME, "rect")).click().perform()
    fs = frames(driver)
    leaf = [f for f in fs if name_of(f) == ZOOM_TO and f["shown"] and not f["up"]
            and abs(f["w"] - full) < 0.1 and abs(f["x"] - pad) < 0.1]
    if len(leaf) != 1:
        fail("zoom: %s does not fill the width alone: %r" % (
            ZOOM_TO, [f for f in fs if name_of(f) == ZOOM_TO]))
    ancestors = [f for f in fs if f["shown"] and f["up"]]
    if not all(abs(f["w"] - full) < 0.1 for f in ancestors):
        fail("zoom: the ancestors are not all kept at full width: %r" % ancestors)
    # Root first: the farthest from the clicked frame.
    ancestors.sort(key=lambda f: -abs(f["y"] - leaf[0]["y"]))
    got_chain = [name_of(f) for f in ancestors]
    # The SVG draws one root above the process names ("all").
    want_chain = [name_of(fs[0])] + widest_path(stacks, ZOOM_TO)[0][:-1]
    if got_chain != want_chain:
        fail("zoom: ancestors %r, the folded stacks say %r" % (got_chain, want_chain))
    siblings = [f for f in fs if name_of(f) == HOVER and f["shown"]]
    if siblings:
        fail("zoom: the sibling %s is still shown" % HOVER)
    if reset.value_of_css_property("visibility") != "visible":
        fail("zoom: Reset Zoom is not shown")
    print("ok: 2 zoomed on %s: %.1f px wide, ancestors kept %s, %s hidden (%s)" % (
        ZOOM_TO, leaf[0]["w"], " > ".join(got_chain), HOVER, shoot(driver, shots, "2-zoomed")))

    # 3. search through the '/' key and the prompt it opens
    ActionChains(driver).send_keys("/").perform()
    WebDriverWait(driver, 5).until(lambda d: d.switch_to.alert)
    prompt = driver.switch_to.alert
    prompt.send_keys(SEARCH)
    prompt.accept()
    matched = driver.find_element(By.ID, "matched").text
    m = re.fullmatch(r"Matched: ([0-9.]+)%", matched)
    if not m:
        fail("search: the matched line reads %r" % matched)
    rx = re.compile(SEARCH)
    hit = sum(c for stack, c in stacks if any(rx.search(shown_name(fr)) for fr in stack))
    want = 100.0 * hit / total
    if abs(float(m.group(1)) - want) > 0.051:
        fail("search: %s, the folded counts give %.2f%%" % (matched, want))
    painted = [f for f in frames(driver) if rx.search(name_of(f)) and f["fill"] != "#e600e6"]
    if painted:
        fail("search: matching frames not highlighted: %r" % painted[:3])
    print("ok: 3 searched %s: page says %s, folded counts %d of %d = %.2f%% (%s)" % (
        SEARCH, matched, hit, total, want, shoot(driver, shots, "3-searched")))

    # 4. Reset Zoom
    ActionChains(driver).move_to_element(reset).click().perform()
    fs = frames(driver)
    if not all(f["shown"] for f in fs) or abs(fs[0]["w"] - full) > 0.1:
        fail("reset: not every frame is back")
    if reset.value_of_css_property("visibility") != "hidden":
        fail("reset: Reset Zoom is still visible")
    print("ok: 4 reset: all %d frames shown again (%s)" % (len(fs), shoot(driver, shots, "4-reset")))

    # 5. hover burn_seventy
    target = element_of(driver, HOVER)
    ActionChains(driver).move_to_element(target.find_element(By.TAG_NAME, "rect")).perform()
    details = driver.find_element(By.ID, "details").get_attribute("textContent")
    m = re.fullmatch(re.escape(HOVER) + r" \(([0-9,]+) samples?, ([0-9.]+)%\)", details)
    if not m:
        fail("hover: the details line reads %r" % details)
    n = widest_path(stacks, HOVER)[1]
    got = int(m.group(1).replace(",", ""))
    if got != n or abs(float(m.group(2)) - 100.0 * n / total) > 0.0051:
        fail("hover: %r, the folded counts give %d samples, %.2f%%" % (details, n, 100.0 * n / total))
    print("ok: 5 hovered %s: %r (%s)" % (HOVER, details, shoot(driver, shots, "5-hover")))

    # 6. the console
    logs = driver.get_log("browser")
    errors = [e for e in logs if e["level"] in ("SEVERE", "ERROR")]
    if errors:
        fail("console errors: %r" % errors)
    print("ok: 6 no console error (%d console entries)" % len(logs))


if __name__ == "__main__":
    main()
