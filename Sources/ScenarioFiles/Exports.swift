// Scenario files name policies from the registry of the built-in ones and a user's own: whoever
// reads a scenario sees them.
@_exported import Policies
