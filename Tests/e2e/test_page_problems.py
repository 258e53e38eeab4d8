"""The page says what is wrong and since when: the banner's level and problems, the changes from
before it was opened (`/changes`), a timeline per part, and a layout where nothing leaves its card.

Every reachd here runs in a namespace; targets are loopback literals of that namespace or the
names of the world's own resolver (never a name or nameserver of the host).

`REACHD_PAGE_SCREENSHOT=docs/page.png` makes the layout test write the README's screenshot at
1,200 px (`REACHD_PAGE_SCREENSHOT_PHONE=…`: the same at 400 px); `make page-screenshot` runs it.
"""

from __future__ import annotations

import os
import socket
import time

import pytest
from selenium.webdriver.common.by import By

import netns
from conftest import get_status
from test_page import Browser, browser, open_page  # noqa: F401 (fixture)
from icmp_world import icmp_world, reachd_icmp  # noqa: F401 (fixtures)
from world import NO_CONTENT, reachd_in, target_args, world  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

WIDTHS = (1200, 400)


def level(b: Browser) -> str:
    return b.driver.find_element(By.ID, "banner").get_attribute("data-level")


def timelines(b: Browser) -> dict[str, list[str]]:
    """Each strip's name → the states of its segments, oldest first."""
    # One script: the page redraws the strips after each event and when `/changes` answers.
    return b.driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('[data-timeline]')]"
        ".map((strip) => [strip.dataset.timeline, [...strip.querySelectorAll('span')].map((s) => s.dataset.state)]))")


def change_rows(b: Browser) -> list[tuple[str, str]]:
    """The list of changes, newest first: (text, data-tone)."""
    return b.change_rows()


def cause_line(b: Browser) -> str | None:
    """The banner's line under the state that names the cause (`None` without one)."""
    found = b.driver.find_elements(By.CSS_SELECTOR, "#banner #problems .cause")
    return found[0].text if found else None


def wait_status(port: int, ns: str, predicate, timeout: float, what: str) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        doc = get_status(port, ns=ns)
        if predicate(doc):
            return doc
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not in /status within {timeout}s: {doc}")
        time.sleep(0.2)


def target(doc: dict, name: str) -> dict:
    return next(t for t in doc["targets"] if t["name"] == name)


# Every element and every line of text inside a card (and the banner) stays inside that card's box.
OVERFLOWS = """
const out = [];
for (const card of document.querySelectorAll('header, .card, .flag, #off')) {
  if (!card.getClientRects().length) continue;
  const box = card.getBoundingClientRect();
  const walker = document.createTreeWalker(card, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    let rects;
    if (node.nodeType === Node.TEXT_NODE) {
      // An ellipsis (.clip) cuts its text on purpose: its element's box is checked instead.
      if (!node.textContent.trim() || node.parentElement.closest('.clip')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      rects = [...range.getClientRects()];
    } else {
      rects = node.getClientRects().length ? [node.getBoundingClientRect()] : [];
    }
    for (const r of rects) {
      if (r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5)) {
        const what = node.nodeType === Node.TEXT_NODE ? JSON.stringify(node.textContent.slice(0, 40))
          : node.tagName.toLowerCase() + (node.id ? '#' + node.id : '') + (node.className ? '.' + node.className : '');
        out.push(what + ' in ' + (card.id || card.className) + ': ' + Math.round(r.left) + '–' + Math.round(r.right)
          + ' outside ' + Math.round(box.left) + '–' + Math.round(box.right));
      }
    }
  }
}
if (document.documentElement.scrollWidth > window.innerWidth) out.push('the page is wider than the window');
return out;
"""


def test_banner_says_what_is_wrong_and_the_record_starts_before_opening(veth, reachd_factory, browser):
    ns = veth.ns.name
    web = netns.socket_in(ns)  # a port that accepts, inside the namespace
    web.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    web.bind(("127.0.0.1", 0))
    web.listen(64)
    db = netns.socket_in(ns)  # a port that refuses until it listens
    db.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    db.bind(("127.0.0.1", 0))
    try:
        server = reachd_factory("--target", f"web=tcp://127.0.0.1:{web.getsockname()[1]}",
                                "--target", f"db=tcp://127.0.0.1:{db.getsockname()[1]}",
                                "--target-interval", "2", netns=ns)
        # db goes down before the page is opened: only /changes can tell the page.
        doc = wait_status(server.port, ns, lambda d: target(d, "db")["state"] == "unreachable"
                          and target(d, "web")["state"] == "reachable", 15, "db unreachable, web reachable")
        assert doc["state"] == "reachable"
        detail = target(doc, "db")["detail"]
        assert detail and "ECONNREFUSED" in detail, doc

        b = browser(ns)
        open_page(b, server)
        assert b.text("state") == "reachable" and level(b) == "warn"
        # The cause first (DESIGN "The cause first"): the line under the state, leading the
        # problems — db's own entry is not said twice.
        assert doc["cause"]["layer"] == "target" and doc["cause"]["subject"] == "db", doc["cause"]
        assert cause_line(b) == doc["cause"]["text"], cause_line(b)
        problems = b.text("problems")
        assert problems == doc["cause"]["text"] == f"db is unreachable (refused: {detail})", problems
        assert detail in b.text("targets")
        rows = change_rows(b)
        assert rows[0][0].endswith("opened: reachable"), rows
        went_down = [(text, tone) for text, tone in rows[1:] if "target db: unknown → unreachable" in text
                     or "target db: reachable → unreachable" in text]
        assert went_down, rows  # before the page was opened
        assert f"(refused: {detail})" in went_down[0][0] and went_down[0][1] == "bad", went_down
        # A strip per target and the route; connectivity and DNS are off: one quiet line, no card, no strip.
        strips = timelines(b)
        assert set(strips) == {"route", "target:web", "target:db"}, strips
        assert strips["target:db"][-1] == "unreachable" and strips["target:web"][-1] == "reachable", strips
        assert strips["route"] == ["reachable"], strips
        segment = b.driver.find_element(By.CSS_SELECTOR, '[data-timeline="target:db"] span:last-child')
        assert segment.get_attribute("title").startswith("unreachable · ") and "now" in segment.get_attribute("title")
        off = b.text("off")
        assert "connectivity" in off and "DNS" in off, off
        for card in ("connectivity-card", "dns-card"):
            assert not b.driver.find_element(By.ID, card).is_displayed()

        # db answers: nothing is failing.
        db.listen(64)
        b.wait_for(lambda: level(b) == "ok", 15, "the banner ok")
        assert b.text("problems") == "" and b.text("state") == "reachable"
        assert cause_line(b) is None
        b.wait_for(lambda: "target db: unreachable → reachable" in change_rows(b)[0][0], 2, "db up in the list")
        assert change_rows(b)[0][1] == "good"
        b.wait_for(lambda: timelines(b)["target:db"][-2:] == ["unreachable", "reachable"], 3, "db's strip")

        # No route: red, whatever the loopback targets say.
        veth.link_down()
        b.wait_text("state", "unreachable", timeout=2)
        b.wait_for(lambda: level(b) == "bad", 2, "the banner bad")
        # The link named first, and its row marked among the interfaces.
        b.wait_for(lambda: b.text("problems").startswith(f"{veth.link} is down"), 2, "the cause first")
        assert cause_line(b) == f"{veth.link} is down", cause_line(b)
        marked = b.driver.find_elements(By.CSS_SELECTOR, "#interfaces .row.cause .name")
        assert [m.text for m in marked] == [veth.link], [m.text for m in marked]
        # The strips and the list follow `/changes`, read after the event.
        b.wait_for(lambda: timelines(b)["route"][-2:] == ["reachable", "unreachable"], 3, "the route strip")
        b.wait_for(lambda: change_rows(b)[0][1] == "bad", 3, "the change in red")
        assert b.console_errors() == []
    finally:
        web.close()
        db.close()


def test_nothing_leaves_its_card(world, reachd_in, browser):
    """At 1,200 and 400 px: a world with connectivity, DNS and targets, one of them refused, after
    the link went down and came back before the page was opened."""
    web = world.server(default=NO_CONTENT)
    closed = world.closed_port()
    server = reachd_in(world, *target_args({
        "db": f"tcp://db.test:{web.port}",
        "api": f"http://db.test:{web.port}/healthz",
        "cache": f"tcp://db.test:{closed}",
    }), "--connectivity-url", f"http://db.test:{web.port}/generate_204", "--target-interval", "2",
        "--dns-check", "db.test.")
    ns = world.client.name
    wait_status(server.port, ns, lambda d: d["connectivity"]["state"] == "full" and d["dns"]["state"] == "ok"
                and target(d, "cache")["state"] == "unreachable" and target(d, "db")["state"] == "reachable",
                20, "connectivity full, DNS ok, cache refused")
    world.link_down()
    wait_status(server.port, ns, lambda d: d["state"] == "unreachable", 5, "unreachable")
    time.sleep(3)  # long enough to be seen on the strips
    world.link_up()
    wait_status(server.port, ns, lambda d: d["state"] == "reachable" and d["connectivity"]["state"] == "full"
                and target(d, "db")["state"] == "reachable" and target(d, "cache")["reason"] == "refused",
                20, "back")

    b = browser(ns)
    open_page(b, server)
    assert level(b) == "warn" and b.text("problems").startswith("cache is unreachable (refused: ")
    strips = timelines(b)
    assert set(strips) == {"route", "connectivity", "dns", "target:db", "target:api", "target:cache"}, strips
    assert strips["route"][-3:] == ["reachable", "unreachable", "reachable"], strips
    assert b.driver.find_element(By.ID, "off").is_displayed() is False
    for width in WIDTHS:
        b.driver.set_window_size(width, 900)
        b.wait_for(lambda: b.driver.execute_script("return window.innerWidth") == width, 2, f"{width} px")
        time.sleep(0.2)  # a frame for the relayout
        assert b.driver.execute_script(OVERFLOWS) == [], width
    assert b.console_errors() == []

    for variable, width in (("REACHD_PAGE_SCREENSHOT", WIDTHS[0]), ("REACHD_PAGE_SCREENSHOT_PHONE", WIDTHS[1])):
        if path := os.environ.get(variable):
            b.screenshot(path, width)
            print(f"screenshot: {path}")


def test_each_uplinks_connectivity_is_beside_its_interface(world, reachd_in, browser):
    """`--per-uplink`: a backup uplink whose answers are lost past its gateway reads `limited`
    beside its interface and in the banner's problems, while the kernel's choice is `full`; its link
    down takes the line away."""
    web = world.server(default=NO_CONTENT)
    second = world.add_second_link()
    world.client.ip("route", "add", "default", "via", world.gateway_ip2, "dev", second, "metric", "200")
    world.gateway.ip("route", "add", "blackhole", f"{world.client_ip2}/32")
    server = reachd_in(world, "--connectivity-url", f"http://{world.db_ip}:{web.port}/generate_204",
                       "--per-uplink", "--connectivity-timeout", "1", "--ipv4-destination", world.db_ip)
    ns = world.client.name

    def uplink(doc: dict, name: str) -> dict | None:
        return next(i for i in doc["interfaces"] if i["name"] == name)["connectivity"]

    wait_status(server.port, ns, lambda d: d["connectivity"]["state"] == "full"
                and (uplink(d, world.link) or {}).get("state") == "full"
                and (uplink(d, second) or {}).get("reason") == "timeout", 20, "the backup limited (timeout)")
    b = browser(ns)
    open_page(b, server)
    assert level(b) == "warn"
    # The cause first: the backup uplink, its own entry not said twice.
    assert b.text("problems") == f"uplink {second} is limited (timeout)", b.text("problems")
    def uplink_badges() -> dict[str, list[str]]:
        return {row.find_element(By.CLASS_NAME, "name").text:
                [badge.text for badge in row.find_elements(By.CSS_SELECTOR, ".uplink .badge")]
                for row in b.driver.find_elements(By.CSS_SELECTOR, "#interfaces .row")}

    badges = uplink_badges()
    assert badges[second] == ["limited", "timeout"] and badges[world.link] == ["full"], badges

    world.client.ip("link", "set", second, "down")
    b.wait_for(lambda: b.text("problems") == "", 10, "no problem once the backup is no uplink")
    badges = uplink_badges()
    assert badges.get(second, []) == [] and badges[world.link] == ["full"], badges
    assert b.console_errors() == []


def test_an_impaired_family_says_its_impairments_in_words(icmp_world, reachd_icmp, browser):
    """A path-MTU blackhole on both families (the router's onward link is smaller and its ICMP
    errors are dropped): each family of the target carries its impairment as words, and the
    banner names it; the errors let through again, the words go."""
    w = icmp_world
    w.shrink_mtu()
    w.block_router_errors()
    server = reachd_icmp("--target", f"far=icmp://{w.far4}", "--target", f"far6=icmp://[{w.far6}]",
                         "--target-failures", "2", "--target-interval", "1", "--target-timeout", "1")
    deadline = time.monotonic() + 30
    while not all(target(get_status(server.port, ns=w.client.name), name)[family]["impairments"] == ["mtu"]
                  for name, family in (("far", "ipv4"), ("far6", "ipv6"))):
        assert time.monotonic() < deadline, get_status(server.port, ns=w.client.name)["targets"]
        time.sleep(0.2)
    b = browser(w.client.name)
    open_page(b, server)
    assert level(b) == "warn"
    # The cause first: IPv6's impairment before IPv4's; far6's own entry is not said twice.
    assert b.text("problems") == "far6 is impaired over IPv6: mtu, far IPv4 MTU blackhole", b.text("problems")
    badges = [badge.text for badge in b.driver.find_elements(By.CSS_SELECTOR, "#targets .impaired")]
    assert badges == ["MTU blackhole", "MTU blackhole"], badges

    w.allow_router_errors()
    b.wait_for(lambda: b.text("problems") == "", 30, "no impairment once discovery works")
    assert b.driver.find_elements(By.CSS_SELECTOR, "#targets .impaired") == []
    assert b.console_errors() == []
