import BGSimCommandLine

// bgsim with the built-in policies; a user's package passes its own (docs/policies.md).
BGSimCommandLine.main()
