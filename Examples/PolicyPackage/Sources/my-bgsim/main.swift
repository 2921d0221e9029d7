import BGSimCommandLine
import QuietHoursPolicy

// bgsim, with every command taking the policies listed here by name.
BGSimCommandLine.main(policies: [QuietHoursPolicy.self])
