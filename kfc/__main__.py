"""`python -m kfc …` (also the spark-submit entry: `spark-submit … "$(python -c 'import kfc.__main__ as m; print(m.__file__)')" replay …`)."""

from kfc.cli import main

if __name__ == "__main__":
    main()
