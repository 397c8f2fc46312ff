"""The smb.conf editor: text and form views of one lossless document."""
