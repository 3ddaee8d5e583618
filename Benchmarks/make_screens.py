#!/usr/bin/env python3
"""Writes screen sets for the benchmarks.

    make_screens.py bench DIR        the example screens plus `menu`: a ~2 KB skeleton whose data
                                     comes from a fixture only (so it is precomputed)
    make_screens.py generated DIR N  N independent screens, each with a fixture source
"""
import json
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def menu_screen():
    dishes = [{"name": f"Dish number {i}", "price": f"{8 + i}.50 EUR"} for i in range(24)]
    components = [
        {"name": "label_component", "identifier": "title", "content": {"value": "Today's menu", "kind": "title"}},
        {"name": "label_component", "identifier": "subtitle", "content": {"value": {"$bind": "menu.subtitle"}, "kind": "subtitle"}},
    ]
    for section in ["Starters", "Mains", "Desserts", "Drinks", "Specials", "Kids"]:
        components.append({"name": "label_component", "identifier": f"{section.lower()}_title",
                           "content": {"value": section, "kind": "subtitle"}})
        components.append({"name": "label_component", "identifier": f"{section.lower()}_note",
                           "content": {"value": f"Ask us about today's {section.lower()}; everything is made in house.", "kind": "body"}})
        components.append({"name": "spacer_component", "content": {}})
    components.append({"name": "collection_component", "identifier": "dishes", "content": {
        "component_name": "label_component",
        "values": {"$each": "menu.dishes", "as": "dish", "template": {"value": {"$template": "{dish.name}: {dish.price}"}}}}})
    components.append({"name": "button_component", "identifier": "back", "content": {
        "title": "Back to the start", "action": {"identifier": "navigation", "content": {"interface_identifier": "landing"}}}})
    return {
        "name": "menu", "entry": True,
        "description": "Benchmark screen: a 2 KB skeleton with fixture-only data.",
        "sources": {"menu": {"type": "fixture", "value": {"subtitle": "Served from noon to ten", "dishes": dishes}}},
        "components": components,
    }


def generated_screen(i):
    return {
        "name": f"screen-{i:05d}", "entry": True,
        "sources": {"feed": {"type": "fixture", "value": {"headline": f"Headline {i}", "items": [f"item {j}" for j in range(5)]}}},
        "components": [
            {"name": "label_component", "identifier": "title", "content": {"value": f"Screen {i}", "kind": "title"}},
            {"name": "label_component", "identifier": "headline", "content": {"value": {"$bind": "feed.headline"}}},
            {"name": "collection_component", "identifier": "items", "content": {
                "component_name": "label_component",
                "values": {"$each": "feed.items", "template": {"value": {"$bind": "item"}}}}},
            {"name": "button_component", "identifier": "next", "content": {
                "title": "Next", "action": {"identifier": "navigation", "content": {"interface_identifier": "screen-00000"}}}},
        ],
    }


def main():
    kind, directory = sys.argv[1], sys.argv[2]
    shutil.rmtree(directory, ignore_errors=True)
    if kind == "bench":
        shutil.copytree(os.path.join(ROOT, "Screens"), directory)
        with open(os.path.join(directory, "menu.json"), "w") as f:
            json.dump(menu_screen(), f, indent=2)
    else:
        os.makedirs(directory)
        for i in range(int(sys.argv[3])):
            with open(os.path.join(directory, f"screen-{i:05d}.json"), "w") as f:
                json.dump(generated_screen(i), f)


if __name__ == "__main__":
    main()
