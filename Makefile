# The two commands of README.md, plus helpers. `.ci/run` calls `make test`.
.PHONY: demo test test-fresh docs bench fuzz lint

demo: ## Build, serve the bundled demo site, fetch it, show the artifacts.
	./scripts/demo.sh

test: ## Install what the tests need, lint, run all tests.
	./scripts/test.sh

test-fresh: ## `make test` as a fresh machine runs it: new clone, HOME, XDG_*, TMPDIR, docker dir.
	./scripts/fresh-test.sh

docs: ## Regenerate docs/cli.md and the generated tables of docs/reference.md.
	cargo build --quiet
	./target/debug/afhttp --help --recursive --output markdown > docs/cli.md
	AFHTTP_TEST_WRITE_DOCS=1 cargo test --quiet --lib env::tests::reference_table_is_fresh

bench: ## Run the benchmarks and rewrite docs/benchmarks.md.
	./bench/run.sh

fuzz: ## Time-boxed cargo fuzz of every target (nightly; FUZZ_SECONDS each, default 60).
	./bench/fuzz.sh

lint:
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings
