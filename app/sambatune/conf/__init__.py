"""smb.conf as a lossless document, its meaning as Samba reads it, the parameter catalog, lint.

No Qt here, and nothing is imported by this package file itself: import the module
you need (``from sambatune.conf.document import SmbConfDocument``), so the CLI only
pays for what it uses. Line numbers are 1-based physical lines everywhere.

Document (:mod:`sambatune.conf.document`)
    ``doc = SmbConfDocument(data: bytes | str, path=None)`` (or ``SmbConfDocument.read(path)``)
    parses anything; ``doc.render() -> bytes`` gives the exact bytes back (CRLF, tabs,
    trailing blanks, no final newline, Latin-1 or binary bytes: ``doc.utf8`` says whether
    the file was valid UTF-8; other bytes are kept as lone surrogates in the text).
    ``doc.line(n) -> Line`` and ``doc.lines(first, last)`` give ``number, text, eol,
    kind, name_span, value_span, entry_line``: the kind is one of blank, comment,
    section, parameter, continuation (a later line of a backslash-continued entry),
    text (no ``=``: Samba skips it), bad-section, empty-name (both make Samba refuse the
    file); spans are ``(start, end)`` offsets into ``text`` for highlighting.
    ``doc.entries()`` yields ``Entry(kind, line, last_line, name, value)`` as Samba reads
    them (continuations joined, blank runs collapsed, no inline comments);
    ``doc.entry_at(n)`` is the entry a line belongs to.

    Re-parsing while typing: ``doc.replace_lines(first, count, new_lines)`` swaps
    physical lines and re-scans only the entries around them (microseconds, whatever
    the file's size); ``doc.set_text(data)`` reloads everything; ``doc.copy()`` is an
    independent snapshot (hand it to a worker thread); ``doc.generation`` increases with
    every change. A full parse of 50,000 lines takes about 30 ms, the effective view as
    much again, lint about 80 ms (bench/conf_parse.py).

Edits (:mod:`sambatune.conf.edits`), all returning ``[LineChange(first, removed, inserted)]``
    ``set_parameter(doc, section, name, value, catalog)`` replaces the occurrence that
    wins (the last one in the section, synonyms and repeated blocks included) and
    leaves earlier, ineffective ones alone; it adds a missing one at the end of the
    section, a missing share at the end of the file, and a [global] default above the
    first share (shares copy [global] when they are defined).
    ``unset_parameter(...)`` removes every occurrence in the section, synonyms included.
    ``add_section``, ``rename_section``, ``remove_section``, ``comment_out(doc, line)``
    and ``uncomment(doc, line)`` (exact round trip). New lines copy the file's
    indentation, ``=`` spacing, line endings and comment character. Bad input raises
    :class:`sambatune.errors.InvalidInput`.

Catalog (:mod:`sambatune.conf.catalog`, :mod:`sambatune.conf.catalog_build`)
    ``load_bundled(version=None)`` is the snapshot shipped in resources/parameters/
    (a stand-in for other versions, with ``exact`` False and removals applied);
    ``live_catalog(transport)`` runs the server's own testparm (locally or over SSH)
    and caches the result per Samba version; ``cached_local_catalog()`` finds this
    computer's without running anything. ``catalog.lookup(name) -> Lookup(parameter,
    synonym, inverse)`` matches names as Samba does (case and blanks ignored);
    ``Parameter`` has ``name, type, scope, default, synonyms, deprecated, enum_values,
    enum_choices``; ``catalog.removed(name)`` and ``catalog.status(name)`` know
    removed parameters and the release they went in; ``catalog.suggest(name)``.

Effective view (:mod:`sambatune.conf.effective`)
    ``view = effective_view(doc, catalog, read_include=LocalIncludes() |
    TransportIncludes(transport) | None)``: ``view.sections`` (global first) each with
    ``settings`` (canonical name -> ``Setting(name, value, written_name, written_value,
    file, line, inverse)``), ``parametric`` options and ``overridden`` assignments;
    ``view.resolve(section, name) -> Resolved(value, source, setting)`` gives what a
    share really gets (set, copied, inherited from [global] as it stood when the share
    was defined, or default); ``view.ignored``, ``view.problems``, ``view.includes``
    (each include a linked document with its own lines); ``view.to_json()``.
    ``sambatune.conf.normalize.stored_form(parameter, value)`` is a value as testparm
    prints it (Yes/No, sizes in bytes, ...).

Lint and explain (:mod:`sambatune.conf.lint`, :mod:`sambatune.conf.explain`)
    ``lint(doc, catalog, view=None, read_include=None) -> [Finding(line, section,
    parameter, severity, code, message, file)]`` with the stable codes in
    ``lint.CODES``; ``explain(name, catalog) -> Explanation`` merges the catalog's facts
    for that version with our notes (resources/parameters/explanations.json) and a
    verdict on old tuning advice; ``manpage.parameter_entry(name, transport)`` is the
    server's own smb.conf(5) entry as text (None when the page is not installed).
"""
