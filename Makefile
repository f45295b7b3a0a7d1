# The two commands of README.md, plus helpers. `.ci/run` calls `make test`.
.PHONY: demo test docs bench fuzz lint

demo: ## Build, serve the bundled demo site, fetch it, show the artifacts.
	./scripts/demo.sh

test: ## Install what the tests need, lint, run all tests.
	./scripts/test.sh

docs: ## Regenerate docs/cli.md from the command line definitions.
	cargo build --quiet
	./target/debug/afhttp --help --recursive --output markdown > docs/cli.md

bench: ## Run the benchmarks and rewrite docs/benchmarks.md.
	./bench/run.sh

fuzz: ## Time-boxed cargo fuzz of every target (nightly; FUZZ_SECONDS each, default 60).
	./bench/fuzz.sh

lint:
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings
