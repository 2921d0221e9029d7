// The phone's API takes the policy API's types (its setup, policy, records) and the
// mechanisms' (their registry and the open lists they complete): a module that runs a phone
// sees them by importing Scheduling.
@_exported import Mechanisms
@_exported import PolicyAPI
