"""Command-line subcommands; each module registers its parsers and holds thin handlers over the package."""
