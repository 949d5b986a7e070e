package gable

import (
	"net/http"
	"time"
)

// Client is a client for one environment (base address and credential). It is safe for
// concurrent use. Each exported field is one of the API's collections (`make generate`
// writes them from the registry, `gable collections`); Collection reaches any collection by
// its API name.
type Client struct {
	key        string
	baseURL    string
	httpClient *http.Client
	maxRetries int
	backoff    time.Duration
	maxBackoff time.Duration

	// BEGIN GENERATED fields: `make generate` writes these from `gable collections`.
	Organizations     *Collection // /v1/organizations
	Companies         *Collection // /v1/companies
	Users             *Collection // /v1/users
	Roles             *Collection // /v1/roles
	Owners            *Collection // /v1/owners
	Properties        *Collection // /v1/properties
	Buildings         *Collection // /v1/buildings
	Units             *Collection // /v1/units
	Rooms             *Collection // /v1/rooms
	Beds              *Collection // /v1/beds
	Listings          *Collection // /v1/listings
	Leads             *Collection // /v1/leads
	Viewings          *Collection // /v1/viewings
	Applications      *Collection // /v1/applications
	Screening         *Collection // /v1/screening
	Leases            *Collection // /v1/leases
	Signatures        *Collection // /v1/signatures
	Tenancies         *Collection // /v1/tenancies
	Bookings          *Collection // /v1/bookings
	Guests            *Collection // /v1/guests
	Charges           *Collection // /v1/charges
	Invoices          *Collection // /v1/invoices
	Payments          *Payments   // /v1/payments
	Refunds           *Collection // /v1/refunds
	AccountingEntries *Collection // /v1/accounting-entries
	Workorders        *Collection // /v1/workorders
	Inspections       *Collection // /v1/inspections
	Assets            *Collection // /v1/assets
	Vendors           *Collection // /v1/vendors
	PurchaseOrders    *Collection // /v1/purchase-orders
	Documents         *Collection // /v1/documents
	Tasks             *Collection // /v1/tasks
	Messages          *Collection // /v1/messages
	Events            *Collection // /v1/events
	Reports           *Collection // /v1/reports
	Webhooks          *Collection // /v1/webhooks
	WebhookDeliveries *Collection // /v1/webhook-deliveries
	FlowTokens        *Collection // /v1/flow-tokens
	RequestLogs       *Collection // /v1/request-logs
	Imports           *Collection // /v1/imports
	// END GENERATED fields
}

func (c *Client) wire() {
	// BEGIN GENERATED wire: `make generate` writes these from `gable collections`.
	c.Organizations = c.Collection("organizations")
	c.Companies = c.Collection("companies")
	c.Users = c.Collection("users")
	c.Roles = c.Collection("roles")
	c.Owners = c.Collection("owners")
	c.Properties = c.Collection("properties")
	c.Buildings = c.Collection("buildings")
	c.Units = c.Collection("units")
	c.Rooms = c.Collection("rooms")
	c.Beds = c.Collection("beds")
	c.Listings = c.Collection("listings")
	c.Leads = c.Collection("leads")
	c.Viewings = c.Collection("viewings")
	c.Applications = c.Collection("applications")
	c.Screening = c.Collection("screening")
	c.Leases = c.Collection("leases")
	c.Signatures = c.Collection("signatures")
	c.Tenancies = c.Collection("tenancies")
	c.Bookings = c.Collection("bookings")
	c.Guests = c.Collection("guests")
	c.Charges = c.Collection("charges")
	c.Invoices = c.Collection("invoices")
	c.Payments = &Payments{c.Collection("payments")}
	c.Refunds = c.Collection("refunds")
	c.AccountingEntries = c.Collection("accounting-entries")
	c.Workorders = c.Collection("workorders")
	c.Inspections = c.Collection("inspections")
	c.Assets = c.Collection("assets")
	c.Vendors = c.Collection("vendors")
	c.PurchaseOrders = c.Collection("purchase-orders")
	c.Documents = c.Collection("documents")
	c.Tasks = c.Collection("tasks")
	c.Messages = c.Collection("messages")
	c.Events = c.Collection("events")
	c.Reports = c.Collection("reports")
	c.Webhooks = c.Collection("webhooks")
	c.WebhookDeliveries = c.Collection("webhook-deliveries")
	c.FlowTokens = c.Collection("flow-tokens")
	c.RequestLogs = c.Collection("request-logs")
	c.Imports = c.Collection("imports")
	// END GENERATED wire
}
