import airtable from '../../../examples/apis/airtable-records.toml?raw';
import githubComments from '../../../examples/apis/github-issue-comments.toml?raw';
import github from '../../../examples/apis/github-issues.toml?raw';
import googleCalendar from '../../../examples/apis/google-calendar-events.toml?raw';
import googleCalendarSync from '../../../examples/apis/google-calendar-sync.toml?raw';
import hubspot from '../../../examples/apis/hubspot-contacts.toml?raw';
import intercom from '../../../examples/apis/intercom-conversations.toml?raw';
import jiraComments from '../../../examples/apis/jira-issue-comments.toml?raw';
import jira from '../../../examples/apis/jira-issues.toml?raw';
import linear from '../../../examples/apis/linear-issues.toml?raw';
import graph from '../../../examples/apis/microsoft-graph-messages.toml?raw';
import graphUsers from '../../../examples/apis/microsoft-graph-users-delta.toml?raw';
import notion from '../../../examples/apis/notion-pages.toml?raw';
import pipedrive from '../../../examples/apis/pipedrive-deals.toml?raw';
import salesforce from '../../../examples/apis/salesforce-accounts.toml?raw';
import shopify from '../../../examples/apis/shopify-orders.toml?raw';
import stripe from '../../../examples/apis/stripe-events.toml?raw';
import zendesk from '../../../examples/apis/zendesk-tickets.toml?raw';
import { FakeAirtable } from './airtable.ts';
import { FakeGitHub } from './github.ts';
import { FakeGoogleCalendar } from './google-calendar.ts';
import { FakeGoogleCalendarSync } from './google-calendar-sync.ts';
import { FakeHubSpot } from './hubspot.ts';
import { FakeIntercom } from './intercom.ts';
import { FakeJira } from './jira.ts';
import { FakeLinear } from './linear.ts';
import { FakeMicrosoftGraph } from './microsoft-graph.ts';
import { FakeGraphUsersDelta } from './microsoft-graph-delta.ts';
import { FakeNotion } from './notion.ts';
import { FakePipedrive } from './pipedrive.ts';
import { FakeSalesforce } from './salesforce.ts';
import { FakeShopify } from './shopify.ts';
import { FakeStripe } from './stripe.ts';
import type { FakeVendor } from './vendor.ts';
import { FakeZendesk } from './zendesk.ts';

/** How an example of examples/apis/ is run: its vendor's fake, and what it deletes with. */
export interface VendorCase {
  /** The example's text, as committed. */
  example: string;
  fake: () => FakeVendor;
  /** Values for the example's own `${SECRET}`s, in the form the vendor issues them. */
  secrets?: Record<string, string>;
  /**
   * How long before a run a record that shows late (or changes) is stamped; default half the
   * example's lag_allowance. Zendesk's export hides the last minute: its late records are
   * older than that.
   */
  lateBy?: number;
  /** The example delivers deletes: a record the vendor shows deleted arrives as a delete. */
  deletes: boolean;
  /**
   * What test/workers/examples.test.ts runs: a time window's records that show late, change
   * or are deleted (`window`, the default), rounds from a resume token (`rounds`: the fake
   * is a RoundsVendor), or the comments of changed issues (`children`: the fake is a
   * CommentVendor, vendors/comments.ts).
   */
  scenario?: 'window' | 'rounds' | 'children';
}

/** A vendor fake of resume tokens: its tokens can expire, and it tells a round from a token. */
export interface RoundsVendor extends FakeVendor {
  /** Every token handed out so far expires. */
  expireTokens(): void;
  /** Whether a request was a page of a round from a token (not from source.url). */
  fromToken(url: URL): boolean;
}

/** Whether a fake is a RoundsVendor. */
export function isRoundsVendor(fake: FakeVendor): fake is RoundsVendor {
  return 'expireTokens' in fake && 'fromToken' in fake;
}

/** One entry per file of examples/apis/ (a test checks that none is left out). */
export const VENDOR_CASES: Record<string, VendorCase> = {
  'zendesk-tickets.toml': {
    example: zendesk,
    fake: () => new FakeZendesk(),
    lateBy: 75_000,
    deletes: true,
  },
  'github-issues.toml': { example: github, fake: () => new FakeGitHub(), deletes: false },
  'github-issue-comments.toml': {
    example: githubComments,
    fake: () => new FakeGitHub(),
    deletes: true,
    scenario: 'children',
  },
  'stripe-events.toml': {
    example: stripe,
    fake: () => new FakeStripe(),
    secrets: { STRIPE_KEY: 'sk_test_example' },
    deletes: false,
  },
  'google-calendar-events.toml': {
    example: googleCalendar,
    fake: () => new FakeGoogleCalendar(),
    deletes: true,
  },
  'google-calendar-sync.toml': {
    example: googleCalendarSync,
    fake: () => new FakeGoogleCalendarSync(),
    deletes: true,
    scenario: 'rounds',
  },
  'pipedrive-deals.toml': { example: pipedrive, fake: () => new FakePipedrive(), deletes: true },
  'hubspot-contacts.toml': { example: hubspot, fake: () => new FakeHubSpot(), deletes: false },
  'notion-pages.toml': { example: notion, fake: () => new FakeNotion(), deletes: true },
  'intercom-conversations.toml': {
    example: intercom,
    fake: () => new FakeIntercom(),
    deletes: false,
  },
  'linear-issues.toml': {
    example: linear,
    fake: () => new FakeLinear(),
    secrets: { LINEAR_API_KEY: 'lin_api_example' },
    deletes: true,
  },
  'shopify-orders.toml': { example: shopify, fake: () => new FakeShopify(), deletes: false },
  'salesforce-accounts.toml': {
    example: salesforce,
    fake: () => new FakeSalesforce(),
    deletes: true,
  },
  'airtable-records.toml': {
    example: airtable,
    fake: () => new FakeAirtable(),
    secrets: { AIRTABLE_TOKEN: 'patExample.1234' },
    deletes: false,
  },
  'jira-issues.toml': { example: jira, fake: () => new FakeJira(), deletes: false },
  'microsoft-graph-users-delta.toml': {
    example: graphUsers,
    fake: () => new FakeGraphUsersDelta(),
    secrets: { GRAPH_TOKEN: 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.example' },
    deletes: true,
    scenario: 'rounds',
  },
  'jira-issue-comments.toml': {
    example: jiraComments,
    fake: () => new FakeJira(),
    deletes: true,
    scenario: 'children',
  },
  'microsoft-graph-messages.toml': {
    example: graph,
    fake: () => new FakeMicrosoftGraph(),
    deletes: false,
  },
};
