import BGSimCommandLine
import QuietHoursPolicy

// bgsim, with every command taking the policies listed here by name.
await BGSimCommandLine.main(policies: [QuietHoursPolicy.self])
