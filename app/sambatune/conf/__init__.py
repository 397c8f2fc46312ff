"""smb.conf as a lossless document, its meaning as Samba reads it, the parameter catalog, lint."""
