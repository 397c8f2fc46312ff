def test_the_share_table_is_read_with_blanks_in_names_and_every_pid_form() -> None:
    from sambatune.remote.smb_sessions import parse_shares_text

    # The layout of source3/utils/status.c (the same from 4.13 on).
    table = (
        "\n"
        "Service      pid     Machine       Connected at                     Encryption   Signing     \n"
        "---------------------------------------------------------------------------------------------\n"
        "IPC$         4101    10.0.0.7      Thu Dec  3 21:00:01 2026 UTC     -            -           \n"
        "icloud photos 4102   10.0.0.8      Thu Dec  3 21:00:02 2026 UTC     -            -           \n"
        "data         4103.2  10.0.0.9      Thu Dec  3 21:00:03 2026 UTC     AES-128-GCM  -           \n"
        "media        0:4104  10.0.0.9      Thu Dec  3 21:00:04 2026 UTC     -            -           \n"
        "data         4105    10.0.0.10     Thu Dec  3 21:00:05 2026 UTC     -            -           \n"
    )
    assert parse_shares_text(table) == ["icloud photos", "data", "media"]
    assert parse_shares_text("") == []
    assert parse_shares_text("No locked files\n") == []
