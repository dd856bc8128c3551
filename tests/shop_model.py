"""A large pydantic model, as a real application has: a shop's whole state, 37 nested models whose JSON
Schema (pydantic 2) holds 576 objects in about 25 KB. For the schema limits (tests/test_schema_limits.py)."""

from __future__ import annotations

from datetime import date, datetime
from enum import Enum
from typing import Literal

from pydantic import BaseModel, Field


class Record(BaseModel):
    """What every stored record has (each model below that has an id inherits it)."""

    id: str
    created: datetime | None = None
    updated: datetime | None = None
    metadata: dict[str, str] | None = None
    external_ref: str | None = None
    labels: list[str] = []


class Currency(str, Enum):
    EUR = "EUR"
    USD = "USD"
    GBP = "GBP"


class Money(BaseModel):
    amount: float = Field(ge=0)
    currency: Currency


class Geo(BaseModel):
    lat: float
    lon: float


class Address(BaseModel):
    line1: str
    geo: Geo | None = None
    line2: str | None = None
    city: str
    region: str | None = None
    postcode: str
    country: str = Field(min_length=2, max_length=2)


class Contact(BaseModel):
    name: str
    title: str | None = None
    locale: str | None = None
    email: str | None = None
    phone: str | None = None


class Customer(Record):
    contact: Contact
    billing: Address
    shipping: Address | None = None
    tags: list[str] = []
    since: date | None = None


class Dimensions(BaseModel):
    length_cm: float
    width_cm: float
    height_cm: float
    weight_kg: float | None = None
    volume_l: float | None = None


class Variant(BaseModel):
    sku: str
    options: dict[str, str] = {}
    price: Money
    dimensions: Dimensions | None = None
    stock: int = 0


class Product(Record):
    title: str
    description: str | None = None
    variants: list[Variant]
    categories: list[str] = []


class Discount(BaseModel):
    code: str
    kind: Literal["percent", "fixed"]
    value: float
    applies_to: list[str] | None = None


class Tax(BaseModel):
    name: str
    rate: float
    amount: Money


class LineItem(BaseModel):
    product: Product
    variant_sku: str
    quantity: int = Field(gt=0)
    unit_price: Money
    discounts: list[Discount] = []
    taxes: list[Tax] = []
    note: str | None = None


class Carrier(BaseModel):
    name: str
    service: str | None = None
    tracking_url: str | None = None


class TrackingEvent(BaseModel):
    at: datetime
    status: Literal["label", "picked_up", "in_transit", "delivered", "exception"]
    location: Address | None = None
    detail: str | None = None


class Parcel(BaseModel):
    dimensions: Dimensions
    items: list[str]
    tracking_number: str | None = None
    events: list[TrackingEvent] = []


class Shipment(Record):
    carrier: Carrier
    to: Address
    parcels: list[Parcel]
    cost: Money | None = None
    shipped_at: datetime | None = None


class Card(BaseModel):
    kind: Literal["card"] = "card"
    brand: str
    last4: str
    expiry: str


class BankTransfer(BaseModel):
    kind: Literal["bank"] = "bank"
    iban: str
    reference: str | None = None


class Payment(Record):
    method: Card | BankTransfer = Field(discriminator="kind")
    amount: Money
    captured_at: datetime | None = None


class Refund(Record):
    payment_id: str
    amount: Money
    reason: str | None = None
    items: list[LineItem] = []


class InvoiceLine(BaseModel):
    description: str
    amount: Money
    taxes: list[Tax] = []


class Invoice(BaseModel):
    number: str
    issued: date
    due: date | None = None
    lines: list[InvoiceLine]
    total: Money
    billed_to: Customer


class AuditEntry(BaseModel):
    at: datetime
    actor: Contact
    action: str
    before: dict[str, str] | None = None
    after: dict[str, str] | None = None


class Order(Record):
    customer: Customer
    items: list[LineItem]
    discounts: list[Discount] = []
    shipments: list[Shipment] = []
    payments: list[Payment] = []
    refunds: list[Refund] = []
    invoices: list[Invoice] = []
    history: list[AuditEntry] = []
    status: Literal["open", "paid", "shipped", "closed", "cancelled"]
    placed_at: datetime
    notes: str | None = None


class Supplier(Record):
    name: str
    contact: Contact
    address: Address
    lead_time_days: int | None = None
    terms: str | None = None


class StockLevel(BaseModel):
    sku: str
    on_hand: int
    reserved: int = 0
    reorder_at: int | None = None
    bin: str | None = None


class Warehouse(Record):
    name: str
    address: Address
    stock: list[StockLevel] = []
    manager: Contact | None = None


class PurchaseLine(BaseModel):
    sku: str
    quantity: int = Field(gt=0)
    unit_cost: Money
    expected: date | None = None


class PurchaseOrder(Record):
    supplier: Supplier
    warehouse_id: str
    lines: list[PurchaseLine]
    status: Literal["draft", "sent", "received", "cancelled"]
    total: Money | None = None


class Plan(Record):
    name: str
    price: Money
    interval: Literal["month", "year"]
    trial_days: int | None = None
    features: list[str] = []


class Subscription(Record):
    customer_id: str
    plan: Plan
    started: date
    renews: date | None = None
    cancelled: date | None = None
    payments: list[Payment] = []


class Review(BaseModel):
    product_id: str
    author: Contact
    rating: int = Field(ge=1, le=5)
    title: str | None = None
    body: str | None = None
    at: datetime


class Permission(BaseModel):
    resource: str
    actions: list[Literal["read", "write", "delete", "admin"]]


class Role(BaseModel):
    name: str
    permissions: list[Permission]
    description: str | None = None


class User(Record):
    contact: Contact
    roles: list[Role] = []
    last_login: datetime | None = None
    disabled: bool = False


class Webhook(BaseModel):
    url: str
    events: list[str]
    secret: str | None = None
    active: bool = True


class Settings(BaseModel):
    default_currency: Currency
    tax_inclusive: bool = False
    origin: Address
    webhooks: list[Webhook] = []
    support: Contact | None = None


class Shop(BaseModel):
    """A shop's whole state: the large model a saved script takes."""

    name: str
    settings: Settings
    users: list[User] = []
    products: list[Product] = []
    reviews: list[Review] = []
    orders: list[Order] = []
    suppliers: list[Supplier] = []
    warehouses: list[Warehouse] = []
    purchase_orders: list[PurchaseOrder] = []
    plans: list[Plan] = []
    subscriptions: list[Subscription] = []
