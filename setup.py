"""The packages the wheel installs.  The repository keeps its top-level `fixtures/` folder, but the
wheel ships it inside the reference as `reference_impl/fixtures` (found with reference_impl.data):
a top-level `fixtures` package would shadow the PyPI distribution of that name.  Everything else is
in pyproject.toml."""

from setuptools import find_namespace_packages, setup

DATA = ["*.json", "*.jsonl", "*.toml", "*.parquet", "*.mjs", "*.xml", "*.java", "*.properties"]
OURS = ["kfc", "kfc.*", "reference_impl", "reference_impl.*", "conformance", "conformance.*", "spark_checks",
        "spark_checks.*"]

DATA_PACKAGES = ["reference_impl.fixtures", *(f"reference_impl.fixtures.{p}" for p in
                                             find_namespace_packages(where="fixtures", exclude=["*__pycache__*"]))]

setup(
    packages=[*find_namespace_packages(include=OURS, exclude=["*__pycache__*"]), *DATA_PACKAGES],
    package_dir={"reference_impl.fixtures": "fixtures"},
    package_data={"": DATA},
)
