# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# What the test bed and the benchmarks need from the system (Debian names). The
# bundle test needs binutils (PyInstaller's objcopy), desktop-file-utils (the
# validator) and the libraries Qt's xcb plugin loads on a real X server. Wine runs the
# Windows tier (a Windows CPython, tests/test_windows_tier.py), the regedit oracle and
# `make windows`; wine32 because Inno Setup's compiler and the setup it writes are
# 32-bit programs (it needs Debian's i386 architecture, added when missing).
# debootstrap builds the root file systems of the Samba 4.22 and 4.25 servers.
SYSTEM_PACKAGES := samba smbclient openssh-server openssh-client sudo xvfb iperf3 fio iproute2 iputils-ping procps debootstrap \
	binutils desktop-file-utils libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0 wine wine64 wine32:i386

.PHONY: run test check lint typecheck pytest system-packages venv windows clean

run: $(VENV)/.installed
	$(BIN)/sambatune

test: system-packages $(VENV)/.installed lint typecheck pytest

# The fast tier while working: lint, types, and the tests that need no test bed, no
# bundle and no long run (markers in pyproject.toml). `make test` still runs everything.
# A third of its time is tests waiting (timeouts, event loops), so it runs one worker
# more than there are cores, and an idle worker takes tests queued for a busy one.
# pytest keeps its rewritten test modules as bytecode: a shell that forbids bytecode
# (PYTHONDONTWRITEBYTECODE) would have it rewrite all of them every run, 6 s more.
check: $(VENV)/.installed lint typecheck
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -m "not testbed and not slow and not bundle" -p no:cacheprovider \
		-n $$($(BIN)/python -c 'import os; print((os.cpu_count() or 1) + 1)') --dist worksteal $(PYTEST_ARGS)

lint: $(VENV)/.installed
	$(BIN)/ruff check app tests bench ssh_agents installer
	$(BIN)/ruff format --check app tests bench ssh_agents installer

typecheck: $(VENV)/.installed
	$(BIN)/mypy

pytest: $(VENV)/.installed
	$(BIN)/pytest $(PYTEST_ARGS)

venv: $(VENV)/.installed

# The Windows installer, built here under Wine: dist/SambaTune-X.Y.Z-windows-x64-setup.exe.
windows: system-packages $(VENV)/.installed
	$(BIN)/python installer/build_windows_wine.py --out dist --work build/windows

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,fleet]'
	touch $@

# Installs what is missing when run as root; otherwise says what to install.
system-packages:
	@if ! command -v dpkg >/dev/null 2>&1; then \
		echo "Not a Debian-like system: install $(SYSTEM_PACKAGES) with your package manager."; \
		exit 0; \
	fi; \
	missing=""; \
	for p in $(SYSTEM_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" \
			|| missing="$$missing $$p"; \
	done; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "Installing:$$missing"; \
		case "$$missing" in *:i386*) dpkg --print-foreign-architectures | grep -qx i386 \
			|| dpkg --add-architecture i386;; esac; \
		apt-get update -qq || { sleep 15; apt-get update -qq; } \
			|| echo "apt-get update failed in part (a mirror in sync?): installing from the lists it has"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
		echo "Missing system packages:$$missing"; \
		echo "Install them as root (sudo apt-get install$$missing) or run make test as root."; \
		exit 1; \
	fi

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache
