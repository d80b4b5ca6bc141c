"""kfc: the command-line application over the three libraries (`reference_impl`, `conformance`,
`spark_checks`).  Every command lives in `kfc.commands`; `kfc.cli.main` is the click group."""
